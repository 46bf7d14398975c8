import PostgresClient

extension PostgresStore {
    public func addRefusals(_ counts: [RefusalCount], keepFrom: Int64) throws {
        try pool.transaction { connection in
            // A row only for an app that exists (the ingest key named it; it may have gone since).
            // Nodes add to the same rows: the upsert adds, whichever commits first.
            for count in counts {
                try connection.query("""
                    INSERT INTO refusal_counts (app, kind, code, hour, refusals) SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM apps WHERE id = $1)
                    ON CONFLICT (app, kind, code, hour) DO UPDATE SET refusals = refusal_counts.refusals + excluded.refusals
                    """, [count.app, count.kind, count.code, count.hour, Int64(count.count)])
            }
            try connection.query("DELETE FROM refusal_counts WHERE hour < $1", [keepFrom])
        }
    }

    public func refusals(app: String, since: Int64) throws -> [RefusalCount] {
        try pool.withConnection { connection in
            try connection.query("SELECT kind, code, hour, refusals FROM refusal_counts WHERE app = $1 AND hour >= $2 ORDER BY hour, kind, code",
                                 [app, since]).map { row in
                RefusalCount(app: app, kind: row.text(0), code: row.text(1), hour: row.integer(2), count: Int(row.integer(3)))
            }
        }
    }
}
