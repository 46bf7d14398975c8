import PostgresClient

/// Guarded rollouts — the same behaviour as `SQLiteStore+Rollouts.swift`: the stored row is
/// locked (`FOR UPDATE`) before its revision is compared, so two nodes' guards cannot both
/// apply a step; a first save that loses the insert race finds the winner's row.
extension PostgresStore {
    public func rollouts(app: String?) throws -> [RolloutRecord] {
        try auditedConnection { connection in
            try connection.query("""
                SELECT app, rule_id, revision, status, document, updated_at FROM rollouts WHERE $1::text IS NULL OR app = $1::text
                ORDER BY app COLLATE "C", rule_id COLLATE "C"
                """, [app]).map { RolloutRecord(app: $0.text(0), ruleID: $0.text(1), revision: $0.int(2), status: $0.text(3), document: $0.text(4), updatedAt: $0.integer(5)) }
        }
    }

    public func saveRollout(_ record: RolloutRecord, expectedRevision: Int) throws -> Bool {
        try auditedTransaction { connection in
            let stored = try connection.query("SELECT revision FROM rollouts WHERE app = $1 AND rule_id = $2 FOR UPDATE", [record.app, record.ruleID]).first?.int(0)
            guard (stored ?? 0) == expectedRevision else { return false }
            if stored == nil {
                return try connection.query("""
                    INSERT INTO rollouts (app, rule_id, revision, status, document, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
                    ON CONFLICT (app, rule_id) DO NOTHING
                    """, [record.app, record.ruleID, expectedRevision + 1, record.status, record.document, record.updatedAt]).affected == 1
            }
            try connection.query("""
                UPDATE rollouts SET revision = $3, status = $4, document = $5, updated_at = $6 WHERE app = $1 AND rule_id = $2
                """, [record.app, record.ruleID, expectedRevision + 1, record.status, record.document, record.updatedAt])
            return true
        }
    }
}
