import GRDB

extension Migrations {
    /// Issue 42, point 2: hook kinds (`webhook`, `pagerduty`, `teams`, `email`), an e-mail
    /// hook's recipients, whether a hook gets the weekly digest, and the last week whose digest
    /// was queued per hook — so a restart neither skips a week nor sends it twice.
    /// Registered last (after `registerAuditLog`).
    static func registerNotify(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("2026-11-28-notify") { db in
            try db.execute(sql: NotifySchema.sqlite)
        }
    }
}

/// The `2026-11-28-notify` schema, the same on both stores (`PostgresMigrations.notify`).
enum NotifySchema {
    static let sqlite = """
        ALTER TABLE alert_hooks ADD COLUMN kind TEXT NOT NULL DEFAULT 'webhook' CHECK (kind IN ('webhook', 'pagerduty', 'teams', 'email'));
        -- E-mail recipients, one per line; empty for the other kinds.
        ALTER TABLE alert_hooks ADD COLUMN recipients TEXT NOT NULL DEFAULT '';
        ALTER TABLE alert_hooks ADD COLUMN digest INTEGER NOT NULL DEFAULT 0;
        -- The last ISO week (e.g. 2026-W48) whose digest was queued for a hook.
        CREATE TABLE alert_digests (
            hook_id TEXT PRIMARY KEY REFERENCES alert_hooks(id) ON DELETE CASCADE,
            week TEXT NOT NULL
        );
        """

    static let postgres = """
        ALTER TABLE alert_hooks ADD COLUMN kind text NOT NULL DEFAULT 'webhook' CHECK (kind IN ('webhook', 'pagerduty', 'teams', 'email'));
        ALTER TABLE alert_hooks ADD COLUMN recipients text NOT NULL DEFAULT '';
        ALTER TABLE alert_hooks ADD COLUMN digest boolean NOT NULL DEFAULT false;
        CREATE TABLE alert_digests (
            hook_id text PRIMARY KEY REFERENCES alert_hooks(id) ON DELETE CASCADE,
            week text NOT NULL
        );
        """
}
