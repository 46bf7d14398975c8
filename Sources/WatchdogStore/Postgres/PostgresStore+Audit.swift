import PostgresClient

/// The audit log on PostgreSQL: as `SQLiteStore+Audit.swift`, rows written in the change's
/// transaction when the transaction wrote anything (`pg_current_xact_id_if_assigned()`).
extension PostgresStore {
    /// `pool.transaction`, with the current task's pending audit rows in the same transaction.
    func auditedTransaction<Result>(_ body: (PostgresConnection) throws -> Result) throws -> Result {
        let pending = PendingAudit.current
        let entries = pending?.unwritten() ?? []
        guard !entries.isEmpty else { return try pool.transaction(body) }
        return try inTransaction(with: entries, pending, body)
    }

    /// `pool.withConnection`; with pending audit rows, the body and the rows in one transaction.
    func auditedConnection<Result>(_ body: (PostgresConnection) throws -> Result) throws -> Result {
        let pending = PendingAudit.current
        let entries = pending?.unwritten() ?? []
        guard !entries.isEmpty else { return try pool.withConnection(body) }
        return try inTransaction(with: entries, pending, body)
    }

    /// `body`, then the rows if it wrote anything (`pg_current_xact_id_if_assigned()`), in one
    /// transaction; the rows are marked written once it committed.
    private func inTransaction<Result>(with entries: [AuditEntry], _ pending: PendingAudit?, _ body: (PostgresConnection) throws -> Result) throws -> Result {
        var wrote = false
        let result = try pool.transaction { connection in
            wrote = false
            let result = try body(connection)
            if try connection.query("SELECT pg_current_xact_id_if_assigned() IS NOT NULL").first?.bool(0) == true {
                try Self.insert(entries, connection)
                wrote = true
            }
            return result
        }
        if wrote { pending?.markWritten() }
        return result
    }

    private static func insert(_ entries: [AuditEntry], _ connection: PostgresConnection) throws {
        for entry in entries {
            try connection.query("INSERT INTO audit_log (at, actor, address, action, app, before, after) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                                 [entry.at, entry.actor, entry.address, entry.action, entry.app, entry.before, entry.after])
        }
    }

    public func recordAudit(_ entries: [AuditEntry]) throws {
        guard !entries.isEmpty else { return }
        try pool.transaction { connection in try Self.insert(entries, connection) }
    }

    public func auditEntries(_ filter: AuditFilter, before: Int64?, limit: Int) throws -> [AuditEntry] {
        var conditions: [String] = []
        var parameters: [any PostgresEncodable] = []
        func add(_ condition: String, _ value: any PostgresEncodable) {
            parameters.append(value)
            conditions.append(condition.replacingOccurrences(of: "?", with: "$\(parameters.count)"))
        }
        if let before { add("id < ?", before) }
        if let app = filter.app { add("app = ?", app) }
        if let apps = filter.visibleApps { add("app = ANY(string_to_array(?, ','))", apps.joined(separator: ",")) }
        if let actor = filter.actor { add("actor = ?", actor) }
        if let action = filter.action { add("action = ?", action) }
        if let from = filter.from { add("at >= ?", from) }
        if let to = filter.to { add("at < ?", to) }
        let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        parameters.append(Int64(limit))
        return try pool.withConnection { connection in
            try connection.query("SELECT id, at, actor, address, action, app, before, after FROM audit_log \(whereClause) ORDER BY id DESC LIMIT $\(parameters.count)",
                                 parameters).map { row in
                AuditEntry(id: row.integer(0), at: row.integer(1), actor: row.text(2), address: row.text(3), action: row.text(4), app: row.optionalText(5),
                           before: row.optionalText(6), after: row.optionalText(7))
            }
        }
    }

    public func pruneAudit(before cutoff: Int64) throws -> Int {
        try pool.withConnection { connection in
            try connection.query("DELETE FROM audit_log WHERE at < $1", [cutoff]).affected
        }
    }
}
