import PostgresClient

/// The roll-ups of one transaction written to PostgreSQL: one upsert per table over `unnest`
/// arrays, rows in key order (every node locks rows of a table in the same order, so
/// concurrent transactions on several nodes do not deadlock), adding to what is stored.
///
/// All of them go in **one statement** (each upsert a data-modifying `WITH` query), the last of
/// the transaction, sent with its `COMMIT` in one message (`committing`): the roll-up rows
/// every node shares are locked only while the server runs that statement and commits — it has
/// the whole message, so a node cut off after sending it holds nothing afterwards, and one cut
/// off before holds none of these rows. Without `committing` (a batch whose release admission
/// reads these rows afterwards) a cut between the statement and `COMMIT` holds them until
/// PostgreSQL ends the session (`idle_in_transaction_session_timeout`, `PostgresDeadlines`).
extension Rollup {
    /// Writes the roll-ups; with `committing`, commits the transaction in the same message.
    func write(_ connection: PostgresConnection, committing: Bool) throws {
        var statement = UpsertStatement()
        collect(into: &statement)
        guard !statement.queries.isEmpty else { return }
        let body = statement.queries.enumerated().map { "u\($0.offset) AS (\($0.element))" }.joined(separator: ",\n")
        if committing {
            try connection.executeAndCommit("WITH \(body)\nSELECT 1", statement.parameters)
        } else {
            try connection.query("WITH \(body)\nSELECT 1", statement.parameters)
        }
    }

    /// The upserts of one statement and their parameters, numbered across all of them.
    private struct UpsertStatement {
        var queries: [String] = []
        var parameters: [PostgresValue] = []
    }

    private func collect(into connection: inout UpsertStatement) {
        let adds = { (columns: [String]) in columns.map { "\($0) = t.\($0) + excluded.\($0)" }.joined(separator: ", ") }
        let counts = adds(["reports", "suspect_reports", "flooded_reports"])

        upsert(&connection, table: "releases", keys: ["app", "version", "build"],
                   columns: [("sessions", "bigint"), ("affected_sessions", "bigint"), ("auto_fixed", "bigint"), ("test_crashes", "bigint"),
                             ("first_seen", "bigint"), ("last_seen", "bigint"), ("implausible_sessions", "bigint"), ("unknown_session_reports", "bigint"),
                             ("last_received", "bigint")],
                   update: adds(["sessions", "affected_sessions", "auto_fixed", "test_crashes", "implausible_sessions", "unknown_session_reports"])
                       + ", first_seen = least(t.first_seen, excluded.first_seen), last_seen = greatest(t.last_seen, excluded.last_seen)"
                       + ", last_received = greatest(t.last_received, excluded.last_received)",
                   rows: releaseKeys.indices.map { number in
                       let delta = releases[number]
                       return release(number) + [.integer(Int64(delta.sessions)), .integer(Int64(delta.affectedSessions)), .integer(Int64(delta.autoFixed)),
                                                 .integer(Int64(delta.testCrashes)), .integer(delta.firstSeen), .integer(delta.lastSeen),
                                                 .integer(Int64(delta.implausibleSessions)), .integer(Int64(delta.unknownSessionReports)),
                                                 .integer(delta.lastReceived)]
                   })
        upsert(&connection, table: "release_networks", keys: ["app", "version", "build", "network"], columns: [("sessions", "bigint")], update: adds(["sessions"]),
                   rows: networkSessions.map { (key, sessions) in release(key.release) + [.text(key.value), .integer(Int64(sessions))] })
        upsert(&connection, table: "release_kinds", keys: ["app", "version", "build", "kind"], columns: Self.countColumns, update: counts,
                   rows: kinds.map { (key, count) in release(key.release) + [.text(key.kind)] + Self.values(count) })
        upsert(&connection, table: "release_breakdown", keys: ["app", "version", "build", "dimension", "value", "kind"], columns: Self.countColumns, update: counts,
                   rows: breakdown.map { (key, count) in release(key.release) + [.text(key.dimension), .text(key.value), .text(key.kind)] + Self.values(count) })
        upsert(&connection, table: "release_hourly", keys: ["app", "version", "build", "kind", "hour:bigint"], columns: Self.countColumns + [("affected_sessions", "bigint")],
                   update: counts + ", " + adds(["affected_sessions"]),
                   rows: hourly.map { (key, count) in
                       release(key.release) + [.text(key.kind), .integer(key.hour)] + Self.values(count) + [.integer(Int64(hourlyAffected[key] ?? 0))]
                   })
        upsert(&connection, table: "issue_releases", keys: ["app", "version", "build", "fingerprint"],
                   columns: [("kind", "text"), ("screen", "text"), ("view_name", "text"), ("keyboard_mode", "text")] + Self.countColumns
                       + [("affected_sessions", "bigint"), ("first_seen", "bigint"), ("last_seen", "bigint")],
                   update: counts + ", " + adds(["affected_sessions"])
                       + ", first_seen = least(t.first_seen, excluded.first_seen), last_seen = greatest(t.last_seen, excluded.last_seen)",
                   rows: issues.map { (key, delta) in
                       release(key.release) + [.text(key.fingerprint), .text(delta.kind), text(delta.screen), text(delta.viewName), text(delta.keyboardMode)]
                           + Self.values(delta.count) + [.integer(Int64(delta.affectedSessions)), .integer(delta.firstSeen), .integer(delta.lastSeen)]
                   })
        upsert(&connection, table: "keyboard_heights", keys: ["app", "version", "build", "model", "mode", "input_mode", "height:bigint"],
                   columns: [("reports", "bigint"), ("window_sized", "bigint")], update: adds(["reports", "window_sized"]),
                   rows: heights.map { (key, bucket) in
                       release(key.release) + [.text(key.model), .text(key.mode), .text(key.inputMode), .integer(Int64(key.height)),
                                               .integer(Int64(bucket.reports)), .integer(Int64(bucket.windowSized))]
                   })
        upsert(&connection, table: "test_crash_daily", keys: ["app", "day:bigint", "install_id"], columns: [("crashes", "bigint")], update: adds(["crashes"]),
                   rows: testCrashes.map { (key, count) in [.text(key.app), .integer(key.day), .text(key.install), .integer(Int64(count))] })
        upsert(&connection, table: "release_idiom_sessions", keys: ["app", "version", "build", "idiom"], columns: [("sessions", "bigint")], update: adds(["sessions"]),
                   rows: idiomSessions.map { (key, sessions) in release(key.release) + [.text(key.value), .integer(Int64(sessions))] })
        upsert(&connection, table: "release_affected", keys: ["app", "version", "build", "dimension", "value"], columns: [("affected_sessions", "bigint")],
                   update: adds(["affected_sessions"]),
                   rows: affected.map { (key, count) in release(key.release) + [.text(key.dimension), .text(key.value), .integer(Int64(count))] })
        upsert(&connection, table: "release_installs", keys: ["app", "version", "build", "install_id"],
                   columns: [("channel", "text"), ("idiom", "text"), ("sessions", "bigint"), ("reports", "bigint"), ("affected_sessions", "bigint"), ("network", "text"),
                             ("attested_sessions", "bigint"), ("attested_affected_sessions", "bigint")],
                   update: "channel = coalesce(excluded.channel, t.channel), idiom = coalesce(excluded.idiom, t.idiom), network = coalesce(t.network, excluded.network), "
                       + adds(["sessions", "reports", "affected_sessions", "attested_sessions", "attested_affected_sessions"]),
                   rows: installs.map { (key, delta) in
                       release(key.release) + [.text(key.install), text(delta.channel), text(delta.idiom), .integer(Int64(delta.sessions)),
                                               .integer(Int64(delta.reports)), .integer(Int64(delta.affectedSessions)), text(delta.network),
                                               .integer(Int64(delta.attestedSessions)), .integer(Int64(delta.attestedAffectedSessions))]
                   })
        upsert(&connection, table: "release_install_kinds", keys: ["app", "version", "build", "install_id", "kind"],
                   columns: [("reports", "bigint"), ("affected_sessions", "bigint"), ("attested_affected_sessions", "bigint")],
                   update: adds(["reports", "affected_sessions", "attested_affected_sessions"]),
                   rows: installKinds.map { (key, count) in
                       release(key.release) + [.text(key.install), .text(key.kind), .integer(Int64(count.reports)), .integer(Int64(count.affected)),
                                               .integer(Int64(count.attestedAffected))]
                   })
        upsert(&connection, table: "release_hourly_sessions", keys: ["app", "version", "build", "hour:bigint"],
                   columns: [("sessions", "bigint"), ("affected_sessions", "bigint"), ("attested_sessions", "bigint")],
                   update: adds(["sessions", "affected_sessions", "attested_sessions"]),
                   rows: hourlySessions.map { (key, count) in
                       release(key.release) + [.integer(key.hour), .integer(Int64(count.sessions)), .integer(Int64(count.affected)), .integer(Int64(count.attested))]
                   })
    }

    private static let countColumns = [("reports", "bigint"), ("suspect_reports", "bigint"), ("flooded_reports", "bigint")]

    private static func values(_ count: Count) -> [PostgresValue] {
        [.integer(Int64(count.reports)), .integer(Int64(count.suspect)), .integer(Int64(count.flooded))]
    }

    private func release(_ number: Int) -> [PostgresValue] {
        let key = releaseKeys[number]
        return [.text(key.app), .text(key.version), .text(key.build)]
    }

    private func text(_ value: String?) -> PostgresValue { value.map { .text($0) } ?? .null }

    /// `INSERT INTO table AS t (keys…, columns…) SELECT * FROM unnest(…) ON CONFLICT (keys) DO
    /// UPDATE SET update`, the rows sorted by their key columns. A key column is `text` unless
    /// named `name:type`.
    private func upsert(_ connection: inout UpsertStatement, table: String, keys: [String], columns: [(String, String)], update: String,
                        rows: [[PostgresValue]]) {
        guard !rows.isEmpty else { return }
        let keyColumns = keys.map { key -> (String, String) in
            let parts = key.split(separator: ":")
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "text")
        }
        let all = keyColumns + columns
        let sorted = rows.sorted { Self.keyLess($0.prefix(keyColumns.count), $1.prefix(keyColumns.count)) }
        let parameters: [PostgresValue] = all.indices.map { column in
            let values = sorted.map { $0[column] }
            if all[column].1 == "bigint" {
                return PostgresArray.integer(values.map { value in if case .integer(let number) = value { number } else { nil } })
            }
            return PostgresArray.text(values.map { value in if case .text(let text) = value { text } else { nil } })
        }
        let first = connection.parameters.count
        let unnest = all.enumerated().map { "$\(first + $0.offset + 1)::\($0.element.1)[]" }.joined(separator: ", ")
        connection.queries.append("""
            INSERT INTO \(table) AS t (\(all.map(\.0).joined(separator: ", "))) SELECT * FROM unnest(\(unnest))
            ON CONFLICT (\(keyColumns.map(\.0).joined(separator: ", "))) DO UPDATE SET \(update)
            """)
        connection.parameters += parameters
    }

    private static func keyLess(_ a: ArraySlice<PostgresValue>, _ b: ArraySlice<PostgresValue>) -> Bool {
        for (left, right) in zip(a, b) {
            switch (left, right) {
            case (.text(let x), .text(let y)) where x != y: return x < y
            case (.integer(let x), .integer(let y)) where x != y: return x < y
            default: continue
            }
        }
        return false
    }
}
