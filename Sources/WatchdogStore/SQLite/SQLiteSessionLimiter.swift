import GRDB

/// Applies an app's `SessionLimits` to each new session start inside the ingest transaction:
/// counts by hour of arrival (never the client's clock), so a burst past a limit is marked
/// however its `started_at` is spread.
///
/// - An install's starts per hour: key `install_id` (a start without one counts against its
///   network, as one install would).
/// - New installs per network per hour: an install is new when the app has never seen it; one
///   that arrives past its network's limit is marked for good (`install_origins.implausible`),
///   so its later sessions, in any hour, are held apart too.
struct SQLiteSessionLimiter {
    func marks(of session: SessionRecord, receivedAt: Int64, _ db: Database) throws -> SessionMarks {
        var marks = session.marks
        let hour = Rollup.hour(receivedAt)
        let limits = session.policy.limits
        if let install = session.installID {
            let origin = try db.cachedStatement(sql: "SELECT implausible, last_received_at FROM install_origins WHERE app = ? AND install_id = ?")
            var known: (implausible: Bool, lastReceived: Int64)?
            try origin.forEachRow(db, bind: { bind in
                bind.text(session.app)
                bind.text(install)
            }) { row in known = (row.integer(0) != 0, row.integer(1)) }
            if let known {
                if known.implausible { marks.insert(.networkNewInstalls) }
                // An install seen again keeps its origin past retention's window (at most one
                // write an hour): retention deletes only the origins of installs gone quiet.
                if known.lastReceived < receivedAt - 3_600_000 {
                    try db.cachedStatement(sql: "UPDATE install_origins SET last_received_at = ? WHERE app = ? AND install_id = ?").step(db) { bind in
                        bind.integer(receivedAt)
                        bind.text(session.app)
                        bind.text(install)
                    }
                }
            } else {
                var pastLimit = false
                if let network = session.network, limits.newInstallsPerNetworkPerHour > 0 {
                    pastLimit = try count(app: session.app, scope: 1, key: network, hour: hour, db) > limits.newInstallsPerNetworkPerHour
                }
                if pastLimit { marks.insert(.networkNewInstalls) }
                try db.cachedStatement(sql: """
                    INSERT INTO install_origins (app, install_id, network, first_received_at, implausible, last_received_at) VALUES (?, ?, ?, ?, ?, ?)
                    """).step(db) { bind in
                    bind.text(session.app)
                    bind.text(install)
                    bind.text(session.network)
                    bind.integer(receivedAt)
                    bind.bool(pastLimit)
                    bind.integer(receivedAt)
                }
            }
        }
        if limits.sessionsPerInstallPerHour > 0 {
            let key = session.installID ?? "network " + (session.network ?? "")
            if try count(app: session.app, scope: 0, key: key, hour: hour, db) > limits.sessionsPerInstallPerHour { marks.insert(.installRate) }
        }
        return marks
    }

    /// Adds one to a counter of the hour; the total after it.
    private func count(app: String, scope: Int, key: String, hour: Int64, _ db: Database) throws -> Int {
        let statement = try db.cachedStatement(sql: """
            INSERT INTO ingest_hourly_counts (app, scope, key, hour, count) VALUES (?, ?, ?, ?, 1)
            ON CONFLICT DO UPDATE SET count = count + 1
            RETURNING count
            """)
        return Int(try statement.step(db) { bind in
            bind.text(app)
            bind.integer(scope)
            bind.text(key)
            bind.integer(hour)
        } ?? 0)
    }
}
