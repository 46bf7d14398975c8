import GRDB

extension Migrations {
    /// Four eyes (issue 41): which kinds of change of an app need a second person's approval
    /// (`approval_settings.require`: kinds joined by commas), and the proposed changes waiting
    /// for it (`proposals`: the request to replay, its dry run's impact, its status).
    static func registerApprovals(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("2026-11-28-approvals") { db in
            try db.execute(sql: """
                CREATE TABLE approval_settings (
                    app TEXT PRIMARY KEY REFERENCES apps(id),
                    require TEXT NOT NULL
                );
                CREATE TABLE proposals (
                    id TEXT PRIMARY KEY,
                    app TEXT NOT NULL REFERENCES apps(id),
                    kinds TEXT NOT NULL,
                    action TEXT NOT NULL,
                    proposer TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL,
                    method TEXT NOT NULL,
                    path TEXT NOT NULL,
                    query TEXT NOT NULL,
                    body TEXT NOT NULL,
                    if_match TEXT,
                    impact TEXT,
                    status TEXT NOT NULL CHECK (status IN ('pending', 'applying', 'approved', 'refused', 'failed')),
                    decided_by TEXT,
                    decided_at INTEGER,
                    outcome TEXT
                );
                CREATE INDEX proposals_by_app ON proposals (app, created_at);
                """)
        }
        // One scheme of action names (`AuditActions`): rows of before are renamed.
        migrator.registerMigration("2026-11-28-audit-actions") { db in
            try db.execute(sql: AuditActions.renameSQL)
        }
    }
}
