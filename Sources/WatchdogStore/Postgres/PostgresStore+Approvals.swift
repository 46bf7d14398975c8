import PostgresClient

/// Four eyes on PostgreSQL: as `SQLiteStore+Approvals.swift`.
extension PostgresStore {
    public func approvalRequirements(app: String) throws -> [String] {
        let text = try pool.withConnection { connection in
            try connection.query("SELECT require FROM approval_settings WHERE app = $1", [app]).first?.text(0)
        }
        return (text ?? "").split(separator: ",").map(String.init)
    }

    public func saveApprovalRequirements(app: String, kinds: [String]) throws {
        try auditedTransaction { connection in
            guard !(try connection.query("SELECT 1 FROM apps WHERE id = $1", [app]).isEmpty) else { throw StoreError.unknownApp(app) }
            try connection.query("INSERT INTO approval_settings (app, require) VALUES ($1, $2) ON CONFLICT (app) DO UPDATE SET require = excluded.require",
                                 [app, kinds.joined(separator: ",")])
        }
    }

    public func createProposal(_ record: ProposalRecord) throws {
        try auditedTransaction { connection in
            guard !(try connection.query("SELECT 1 FROM apps WHERE id = $1", [record.app]).isEmpty) else { throw StoreError.unknownApp(record.app) }
            try connection.query("""
                INSERT INTO proposals (\(SQLiteStore.proposalColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
                """, [record.id, record.app, record.kinds, record.action, record.proposer, record.createdAt, record.expiresAt, record.method, record.path, record.query,
                      record.body, record.ifMatch, record.impact, record.status, record.decidedBy, record.decidedAt, record.outcome])
        }
    }

    public func proposals(app: String, limit: Int) throws -> [ProposalRecord] {
        try pool.withConnection { connection in
            try connection.query("SELECT \(SQLiteStore.proposalColumns) FROM proposals WHERE app = $1 ORDER BY created_at DESC, id LIMIT $2",
                                 [app, Int64(limit)]).map(Self.proposal)
        }
    }

    public func proposal(app: String, id: String) throws -> ProposalRecord? {
        try pool.withConnection { connection in
            try connection.query("SELECT \(SQLiteStore.proposalColumns) FROM proposals WHERE app = $1 AND id = $2", [app, id]).first.map(Self.proposal)
        }
    }

    public func decideProposal(app: String, id: String, _ decision: ProposalDecision) throws -> Bool {
        try auditedTransaction { connection in
            try connection.query("""
                UPDATE proposals SET status = $1, decided_by = $2, decided_at = $3, outcome = $4
                WHERE app = $5 AND id = $6 AND status = $7 AND ($8::bigint IS NULL OR expires_at > $8::bigint) AND ($9::text IS NULL OR proposer <> $9::text)
                """, [decision.to, decision.decidedBy, decision.at, decision.outcome, app, id, decision.from, decision.liveAt, decision.notBy]).affected == 1
        }
    }

    private static func proposal(_ row: PostgresRow) -> ProposalRecord {
        ProposalRecord(id: row.text(0), app: row.text(1), kinds: row.text(2), action: row.text(3), proposer: row.text(4), createdAt: row.integer(5),
                       expiresAt: row.integer(6), method: row.text(7), path: row.text(8), query: row.text(9), body: row.text(10), ifMatch: row.optionalText(11),
                       impact: row.optionalText(12), status: row.text(13), decidedBy: row.optionalText(14), decidedAt: row.optionalInteger(15),
                       outcome: row.optionalText(16))
    }
}
