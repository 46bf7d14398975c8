import GRDB

extension SQLiteStore {
    public func addRefusals(_ counts: [RefusalCount], keepFrom: Int64) throws {
        try pool.write { db in
            // A row only for an app that exists (the ingest key named it; it may have gone since).
            let add = try db.cachedStatement(sql: """
                INSERT INTO refusal_counts (app, kind, code, hour, refusals) SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM apps WHERE id = ?1)
                ON CONFLICT (app, kind, code, hour) DO UPDATE SET refusals = refusals + excluded.refusals
                """)
            for count in counts {
                try add.execute(arguments: [count.app, count.kind, count.code, count.hour, count.count])
            }
            try db.execute(sql: "DELETE FROM refusal_counts WHERE hour < ?", arguments: [keepFrom])
        }
    }

    public func refusals(app: String, since: Int64) throws -> [RefusalCount] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT kind, code, hour, refusals FROM refusal_counts WHERE app = ? AND hour >= ? ORDER BY hour, kind, code",
                             arguments: [app, since]).map { row in
                RefusalCount(app: app, kind: row[0], code: row[1], hour: row[2], count: row[3])
            }
        }
    }
}
