import GRDB

extension SQLiteStore {
    /// `pool.write`, with the current task's pending audit rows (`PendingAudit`) written in the
    /// same transaction when it changed at least one row.
    func auditedWrite<Result>(_ body: (Database) throws -> Result) throws -> Result {
        let pending = PendingAudit.current
        let entries = pending?.unwritten() ?? []
        var wrote = false
        let result = try pool.write { db in
            wrote = false
            let changesBefore = db.totalChangesCount
            let result = try body(db)
            if !entries.isEmpty, db.totalChangesCount > changesBefore {
                try Self.insert(entries, db)
                wrote = true
            }
            return result
        }
        if wrote { pending?.markWritten() }
        return result
    }

    private static func insert(_ entries: [AuditEntry], _ db: Database) throws {
        for entry in entries {
            try db.execute(sql: "INSERT INTO audit_log (at, actor, address, action, app, before, after) VALUES (?, ?, ?, ?, ?, ?, ?)",
                           arguments: [entry.at, entry.actor, entry.address, entry.action, entry.app, entry.before, entry.after])
        }
    }

    public func recordAudit(_ entries: [AuditEntry]) throws {
        guard !entries.isEmpty else { return }
        try pool.write { db in try Self.insert(entries, db) }
    }

    public func auditEntries(_ filter: AuditFilter, before: Int64?, limit: Int) throws -> [AuditEntry] {
        var conditions: [String] = []
        var arguments: [(any DatabaseValueConvertible)?] = []
        if let before { conditions.append("id < ?"); arguments.append(before) }
        if let app = filter.app { conditions.append("app = ?"); arguments.append(app) }
        if let apps = filter.visibleApps {
            conditions.append("app IN (SELECT value FROM json_each(?))")
            arguments.append("[" + apps.map { "\"\($0)\"" }.joined(separator: ",") + "]")
        }
        if let actor = filter.actor { conditions.append("actor = ?"); arguments.append(actor) }
        if let action = filter.action { conditions.append("action = ?"); arguments.append(action) }
        if let from = filter.from { conditions.append("at >= ?"); arguments.append(from) }
        if let to = filter.to { conditions.append("at < ?"); arguments.append(to) }
        let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        arguments.append(limit)
        return try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, at, actor, address, action, app, before, after FROM audit_log \(whereClause) ORDER BY id DESC LIMIT ?",
                             arguments: StatementArguments(arguments)).map { row in
                AuditEntry(id: row[0], at: row[1], actor: row[2], address: row[3], action: row[4], app: row[5], before: row[6], after: row[7])
            }
        }
    }

    public func pruneAudit(before cutoff: Int64) throws -> Int {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM audit_log WHERE at < ?", arguments: [cutoff])
            return db.changesCount
        }
    }
}
