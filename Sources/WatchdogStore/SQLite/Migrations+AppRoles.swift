import GRDB

extension Migrations {
    /// Roles per app (issue 41): credentials may be `operator`s, and viewer, operator and admin
    /// tokens may be limited to a list of apps (`apps`: names joined by commas; NULL for every
    /// app, which is what every token made before keeps). SQLite cannot change a CHECK
    /// constraint, so the table is rebuilt (SQLite's "12 steps": new table, copy, drop,
    /// rename); GRDB runs a migration with foreign keys off and checks them after it.
    static func registerAppRoles(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("2026-11-27-app-roles") { db in
            try db.execute(sql: """
                CREATE TABLE credentials_new (
                    id TEXT PRIMARY KEY,
                    role TEXT NOT NULL CHECK (role IN ('ingest', 'viewer', 'operator', 'admin')),
                    app TEXT REFERENCES apps(id),
                    name TEXT NOT NULL,
                    secret_hash BLOB NOT NULL UNIQUE,
                    created_at INTEGER NOT NULL,
                    revoked_at INTEGER,
                    apps TEXT
                );
                INSERT INTO credentials_new (id, role, app, name, secret_hash, created_at, revoked_at)
                    SELECT id, role, app, name, secret_hash, created_at, revoked_at FROM credentials;
                DROP TABLE credentials;
                ALTER TABLE credentials_new RENAME TO credentials;
                """)
        }
    }
}

extension Migrations {
    /// The audit log (issue 41): one row per change, written in the change's transaction
    /// (`SQLiteStore.auditedWrite`). `before` and `after` are JSON without secrets.
    static func registerAuditLog(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("2026-11-27-audit-log") { db in
            try db.execute(sql: """
                CREATE TABLE audit_log (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    at INTEGER NOT NULL,
                    actor TEXT NOT NULL,
                    address TEXT NOT NULL,
                    action TEXT NOT NULL,
                    app TEXT,
                    before TEXT,
                    after TEXT
                );
                CREATE INDEX audit_log_by_time ON audit_log (at);
                CREATE INDEX audit_log_by_app ON audit_log (app, id);
                """)
        }
    }
}
