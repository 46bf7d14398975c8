import GRDB

extension SQLiteStore {
    public func apps() throws -> [AppSummary] {
        try pool.read { db in
            var summaries: [String: AppSummary] = [:]
            var order: [String] = []
            for row in try Row.fetchAll(db, sql: "SELECT id, created_at FROM apps ORDER BY id") {
                let id: String = row["id"]
                order.append(id)
                summaries[id] = AppSummary(app: id, createdAt: row["created_at"], releases: [])
            }
            for row in try Row.fetchAll(db, sql: "SELECT a.app, a.version, a.build FROM release_admissions a JOIN releases r USING (app, version, build)") {
                let app: String = row["app"]
                summaries[app]?.releases.append(ReleaseID(version: row["version"], build: row["build"]))
            }
            return order.compactMap { summaries[$0] }
        }
    }

    public func releases(app: String) throws -> [ReleaseStats]? {
        try pool.read { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM apps WHERE id = ?", arguments: [app]) != nil else { return nil }
            // Read by position through SQLite's C API, like the issue rows: every stats route
            // starts here, and GRDB's lookup by column name was a third of `/timeseries`.
            var releases: [ReleaseStats] = []
            var positions: [ReleaseID: Int] = [:]
            try db.cachedStatement(sql: """
                SELECT \(Self.releaseColumns) FROM release_admissions a JOIN releases r USING (app, version, build) WHERE a.app = ?
                """).forEachRow(db, bind: { $0.text(app) }) { row in
                let stats = Self.releaseStats(row)
                positions[stats.release] = releases.count
                releases.append(stats)
            }
            // Only the listed releases' rows are read: an app with 100,000 unlisted releases
            // costs nothing here.
            try db.cachedStatement(sql: """
                SELECT k.version, k.build, k.kind, k.reports, k.suspect_reports, k.flooded_reports
                FROM release_admissions a JOIN release_kinds k USING (app, version, build) WHERE a.app = ?
                """)
                .forEachRow(db, bind: { $0.text(app) }) { row in
                    guard let position = positions[ReleaseID(version: row.text(0), build: row.text(1))] else { return }
                    let kind = row.text(2)
                    let reports = Int(row.integer(3)), suspect = Int(row.integer(4)), flooded = Int(row.integer(5))
                    if reports > 0 { releases[position].reportsByKind[kind] = reports }
                    if suspect > 0 { releases[position].suspectReportsByKind[kind] = suspect }
                    if flooded > 0 { releases[position].floodedReportsByKind[kind] = flooded }
                }
            try db.cachedStatement(sql: """
                SELECT d.version, d.build, sum(d.evicted), sum(d.quarantined)
                FROM release_admissions a JOIN client_drops d USING (app, version, build) WHERE a.app = ? GROUP BY d.version, d.build
                """).forEachRow(db, bind: { $0.text(app) }) { row in
                guard let position = positions[ReleaseID(version: row.text(0), build: row.text(1))] else { return }
                releases[position].clientEvicted = Int(row.integer(2))
                releases[position].clientQuarantined = Int(row.integer(3))
            }
            return releases
        }
    }

    /// The columns `releaseStats` reads, of `releases r`.
    static let releaseColumns = """
        r.version, r.build, r.sessions, r.affected_sessions, r.auto_fixed, r.test_crashes, r.first_seen, r.last_seen, r.partial_history,
        r.implausible_sessions, r.unknown_session_reports
        """

    /// A release's own roll-up row (kinds and drops are read apart), by position.
    static func releaseStats(_ row: StatementColumns) -> ReleaseStats {
        var stats = ReleaseStats(
            release: ReleaseID(version: row.text(0), build: row.text(1)), sessions: Int(row.integer(2)), reportsByKind: [:], suspectReportsByKind: [:],
            affectedSessions: Int(row.integer(3)), autoFixed: Int(row.integer(4)), testCrashes: Int(row.integer(5)),
            firstSeen: row.integer(6), lastSeen: row.integer(7), partialHistory: row.integer(8) != 0
        )
        stats.implausibleSessions = Int(row.integer(9))
        stats.unknownSessionReports = Int(row.integer(10))
        return stats
    }

    public func concentration(app: String, release: ReleaseID) throws -> InstallConcentration {
        try pool.read { db in try Self.concentration(db, app: app, release: release) }
    }

    /// The top 1 % of a release's installs (at least one) by active reports, and their share.
    static func concentration(_ db: Database, app: String, release: ReleaseID) throws -> InstallConcentration {
        let arguments: StatementArguments = [app, release.version, release.build]
        guard let totals = try Row.fetchOne(db, sql: """
            SELECT count(*), coalesce(sum(reports), 0) FROM release_installs WHERE app = ? AND version = ? AND build = ?
            """, arguments: arguments) else { return InstallConcentration() }
        let installs: Int = totals[0]
        guard installs > 0 else { return InstallConcentration() }
        let top = InstallConcentration.topInstalls(among: installs)
        let topReports = try Int.fetchOne(db, sql: """
            SELECT coalesce(sum(reports), 0) FROM (SELECT reports FROM release_installs WHERE app = ? AND version = ? AND build = ?
                                                   ORDER BY reports DESC LIMIT ?)
            """, arguments: arguments + [top]) ?? 0
        return InstallConcentration(installs: installs, topInstalls: top, reports: totals[1], topInstallsReports: topReports)
    }

    public func installs(app: String, release: ReleaseID) throws -> [InstallRow] {
        try pool.read { db in
            let arguments: StatementArguments = [app, release.version, release.build]
            var rows: [String: InstallRow] = [:]
            for row in try Row.fetchAll(db, sql: """
                SELECT install_id, channel, idiom, sessions, reports, affected_sessions, network, attested_sessions, attested_affected_sessions
                FROM release_installs WHERE app = ? AND version = ? AND build = ?
                """, arguments: arguments) {
                let id: String = row[0]
                var install = InstallRow(installID: id, channel: row[1], idiom: row[2], network: row[6], sessions: row[3], reports: row[4], affectedSessions: row[5],
                                         kinds: [:])
                install.attestedSessions = row[7]
                install.attestedAffectedSessions = row[8]
                rows[id] = install
            }
            for row in try Row.fetchAll(db, sql: """
                SELECT install_id, kind, reports, affected_sessions, attested_affected_sessions FROM release_install_kinds WHERE app = ? AND version = ? AND build = ?
                """, arguments: arguments) {
                let id: String = row[0]
                rows[id]?.kinds[row[1]] = (row[2], row[3])
                if (row[4] as Int) > 0 { rows[id]?.attestedKinds[row[1]] = row[4] }
            }
            return rows.values.sorted { $0.installID < $1.installID }
        }
    }

    public func sessionsByRelease(app: String, fromHour: Int64, limit: Int) throws -> [ReleaseSessionsRow] {
        try pool.read { db in
            try Row.fetchAll(db.cachedStatement(sql: """
                SELECT h.version, h.build, sum(h.sessions) AS sessions, sum(h.attested_sessions) FROM release_admissions a
                JOIN release_hourly_sessions h ON h.app = a.app AND h.version = a.version AND h.build = a.build AND h.hour >= ?
                WHERE a.app = ? GROUP BY h.version, h.build HAVING sum(h.sessions) > 0 ORDER BY sessions DESC, h.version, h.build LIMIT ?
                """), arguments: [fromHour, app, limit]).map { row in
                ReleaseSessionsRow(release: ReleaseID(version: row[0], build: row[1]), sessions: row[2], attestedSessions: row[3])
            }
        }
    }

    public func hourlySessions(app: String, release: ReleaseID?, fromHour: Int64, toHour: Int64) throws -> [HourlySessionsRow] {
        try pool.read { db in
            var sql = "SELECT hour, sum(sessions), sum(affected_sessions) FROM release_hourly_sessions WHERE app = ?"
            var arguments: [(any DatabaseValueConvertible)?] = [app]
            if let release {
                sql += " AND version = ? AND build = ?"
                arguments += [release.version, release.build]
            }
            sql += " AND hour BETWEEN ? AND ? GROUP BY hour ORDER BY hour"
            arguments += [fromHour, toHour]
            return try Row.fetchAll(db.cachedStatement(sql: sql), arguments: StatementArguments(arguments)).map { HourlySessionsRow(hour: $0[0], sessions: $0[1], affectedSessions: $0[2]) }
        }
    }
}
