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
            for row in try Row.fetchAll(db, sql: "SELECT app, version, build FROM releases") {
                let app: String = row["app"]
                summaries[app]?.releases.append(ReleaseID(version: row["version"], build: row["build"]))
            }
            return order.compactMap { summaries[$0] }
        }
    }

    public func releases(app: String) throws -> [ReleaseStats]? {
        try pool.read { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM apps WHERE id = ?", arguments: [app]) != nil else { return nil }
            var stats: [ReleaseID: ReleaseStats] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM releases WHERE app = ?", arguments: [app]) {
                let id = ReleaseID(version: row["version"], build: row["build"])
                stats[id] = ReleaseStats(
                    release: id, sessions: row["sessions"], reportsByKind: [:], suspectReportsByKind: [:],
                    affectedSessions: row["affected_sessions"], autoFixed: row["auto_fixed"],
                    testCrashes: row["test_crashes"], firstSeen: row["first_seen"], lastSeen: row["last_seen"]
                )
            }
            for row in try Row.fetchAll(db, sql: "SELECT * FROM release_kinds WHERE app = ?", arguments: [app]) {
                let id = ReleaseID(version: row["version"], build: row["build"])
                let kind: String = row["kind"]
                let reports: Int = row["reports"]
                let suspect: Int = row["suspect_reports"]
                if reports > 0 { stats[id]?.reportsByKind[kind] = reports }
                if suspect > 0 { stats[id]?.suspectReportsByKind[kind] = suspect }
            }
            for row in try Row.fetchAll(db, sql: """
                SELECT version, build, sum(evicted) AS evicted, sum(quarantined) AS quarantined FROM client_drops
                WHERE app = ? GROUP BY version, build
                """, arguments: [app]) {
                let id = ReleaseID(version: row["version"], build: row["build"])
                stats[id]?.clientEvicted = row["evicted"]
                stats[id]?.clientQuarantined = row["quarantined"]
            }
            return Array(stats.values)
        }
    }
}
