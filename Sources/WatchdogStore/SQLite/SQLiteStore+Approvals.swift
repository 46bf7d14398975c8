import GRDB

/// Four eyes on SQLite: approval settings and proposals (`Migrations.registerApprovals`).
extension SQLiteStore {
    static let proposalColumns = """
        id, app, kinds, action, proposer, created_at, expires_at, method, path, query, body, if_match, impact, status, decided_by, decided_at, outcome
        """

    public func approvalRequirements(app: String) throws -> [String] {
        let text = try pool.read { db in try String.fetchOne(db, sql: "SELECT require FROM approval_settings WHERE app = ?", arguments: [app]) }
        return (text ?? "").split(separator: ",").map(String.init)
    }

    public func saveApprovalRequirements(app: String, kinds: [String]) throws {
        try auditedWrite { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM apps WHERE id = ?", arguments: [app]) != nil else { throw StoreError.unknownApp(app) }
            try db.execute(sql: "INSERT INTO approval_settings (app, require) VALUES (?, ?) ON CONFLICT DO UPDATE SET require = excluded.require",
                           arguments: [app, kinds.joined(separator: ",")])
        }
    }

    public func createProposal(_ record: ProposalRecord) throws {
        try auditedWrite { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM apps WHERE id = ?", arguments: [record.app]) != nil else { throw StoreError.unknownApp(record.app) }
            try db.execute(sql: "INSERT INTO proposals (\(Self.proposalColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", arguments: [
                record.id, record.app, record.kinds, record.action, record.proposer, record.createdAt, record.expiresAt, record.method, record.path, record.query,
                record.body, record.ifMatch, record.impact, record.status, record.decidedBy, record.decidedAt, record.outcome,
            ])
        }
    }

    public func proposals(app: String, limit: Int) throws -> [ProposalRecord] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.proposalColumns) FROM proposals WHERE app = ? ORDER BY created_at DESC, id LIMIT ?",
                             arguments: [app, limit]).map(Self.proposal)
        }
    }

    public func proposal(app: String, id: String) throws -> ProposalRecord? {
        try pool.read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.proposalColumns) FROM proposals WHERE app = ? AND id = ?", arguments: [app, id]).map(Self.proposal)
        }
    }

    public func decideProposal(app: String, id: String, _ decision: ProposalDecision) throws -> Bool {
        try auditedWrite { db in
            try db.execute(sql: """
                UPDATE proposals SET status = ?, decided_by = ?, decided_at = ?, outcome = ?
                WHERE app = ? AND id = ? AND status = ? AND (? IS NULL OR expires_at > ?) AND (? IS NULL OR proposer <> ?)
                """, arguments: [decision.to, decision.decidedBy, decision.at, decision.outcome, app, id, decision.from,
                                 decision.liveAt, decision.liveAt, decision.notBy, decision.notBy])
            return db.changesCount == 1
        }
    }

    private static func proposal(_ row: Row) -> ProposalRecord {
        ProposalRecord(id: row[0], app: row[1], kinds: row[2], action: row[3], proposer: row[4], createdAt: row[5], expiresAt: row[6], method: row[7],
                       path: row[8], query: row[9], body: row[10], ifMatch: row[11], impact: row[12], status: row[13], decidedBy: row[14],
                       decidedAt: row[15], outcome: row[16])
    }
}
