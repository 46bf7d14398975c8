import GRDB

/// Guarded rollouts (`Migrations+Rollouts.swift`).
extension SQLiteStore {
    public func rollouts(app: String?) throws -> [RolloutRecord] {
        try pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT app, rule_id, revision, status, document, updated_at FROM rollouts WHERE ? IS NULL OR app = ? ORDER BY app, rule_id
                """, arguments: [app, app]).map { RolloutRecord(app: $0[0], ruleID: $0[1], revision: $0[2], status: $0[3], document: $0[4], updatedAt: $0[5]) }
        }
    }

    public func saveRollout(_ record: RolloutRecord, expectedRevision: Int) throws -> Bool {
        try auditedWrite { db in
            let stored = try Int.fetchOne(db, sql: "SELECT revision FROM rollouts WHERE app = ? AND rule_id = ?", arguments: [record.app, record.ruleID]) ?? 0
            guard stored == expectedRevision else { return false }
            try db.execute(sql: """
                INSERT INTO rollouts (app, rule_id, revision, status, document, updated_at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (app, rule_id) DO UPDATE SET revision = excluded.revision, status = excluded.status,
                    document = excluded.document, updated_at = excluded.updated_at
                """, arguments: [record.app, record.ruleID, expectedRevision + 1, record.status, record.document, record.updatedAt])
            return true
        }
    }
}
