import GRDB

extension Migrations {
    /// Alert rules, their webhooks, which conditions are firing, and the outbox of deliveries
    /// (docs/durability.md, "Alerts"). A delivery row is written in the same transaction as the
    /// firing that caused it, so an alert that fired is never lost, and it stays `pending`
    /// until a 2xx answer (or its retry window) ends it: a restart resumes where it was.
    static func registerAlerts(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("2026-11-23-alerts") { db in
            try db.execute(sql: """
                -- Where alerts go. The secret signs every delivery (HMAC-SHA256), so it is kept
                -- as such; it is shown once, when the hook is made, and never listed.
                CREATE TABLE alert_hooks (
                    id TEXT PRIMARY KEY,
                    app TEXT NOT NULL REFERENCES apps(id),
                    name TEXT NOT NULL,
                    url TEXT NOT NULL,
                    secret TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    created_by TEXT NOT NULL
                );
                CREATE INDEX alert_hooks_by_app ON alert_hooks (app);
                CREATE TABLE alert_rules (
                    id TEXT PRIMARY KEY,
                    app TEXT NOT NULL REFERENCES apps(id),
                    name TEXT NOT NULL,
                    condition TEXT NOT NULL,
                    kind TEXT,
                    minimum_sessions INTEGER NOT NULL DEFAULT 0,
                    minimum_affected_sessions INTEGER NOT NULL DEFAULT 0,
                    threshold REAL,
                    -- A hook in use cannot be deleted.
                    hook_id TEXT NOT NULL REFERENCES alert_hooks(id),
                    created_at INTEGER NOT NULL,
                    created_by TEXT NOT NULL
                );
                CREATE INDEX alert_rules_by_app ON alert_rules (app);
                -- A condition that holds and was alerted: one row per rule and subject (a
                -- release, or a release's issue) until it clears, so it alerts once.
                CREATE TABLE alert_firings (
                    rule_id TEXT NOT NULL REFERENCES alert_rules(id) ON DELETE CASCADE,
                    subject TEXT NOT NULL,
                    release_version TEXT NOT NULL,
                    release_build TEXT NOT NULL,
                    alert_id TEXT NOT NULL,
                    fired_at INTEGER NOT NULL,
                    PRIMARY KEY (rule_id, subject)
                ) WITHOUT ROWID;
                -- The outbox: one row per alert and hook, the body fixed when the alert fired,
                -- retried with backoff while pending; finished rows are the delivery log.
                CREATE TABLE alert_deliveries (
                    id INTEGER PRIMARY KEY,
                    alert_id TEXT NOT NULL,
                    hook_id TEXT NOT NULL REFERENCES alert_hooks(id) ON DELETE CASCADE,
                    app TEXT NOT NULL,
                    rule_id TEXT,
                    event TEXT NOT NULL,
                    body TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at INTEGER,
                    last_attempt_at INTEGER,
                    last_status INTEGER,
                    last_latency_ms INTEGER,
                    last_error TEXT,
                    delivered_at INTEGER
                );
                CREATE INDEX alert_deliveries_due ON alert_deliveries (state, next_attempt_at);
                CREATE INDEX alert_deliveries_by_hook ON alert_deliveries (hook_id, id);
                """)
        }
        // Issue 23: a rule also needs a number of distinct installs with sessions in the
        // release (install ids are client-made; sessions alone were cheap to forge). Rules made
        // before get the default of the conditions that take it (`AlertRules.defaultMinimumInstalls`).
        migrator.registerMigration("2026-11-26-alert-minimum-installs") { db in
            try db.execute(sql: """
                ALTER TABLE alert_rules ADD COLUMN minimum_installs INTEGER NOT NULL DEFAULT 0;
                UPDATE alert_rules SET minimum_installs = 20 WHERE condition IN ('release_regressed', 'new_issue', 'glitch_free_rate_below');
                """)
        }
    }

    /// Issue 28: a rule may read attested installs only (docs/security.md, "Attested installs").
    /// Registered after the attestation tables (`registerAttestation`), last.
    static func registerAlertInstalls(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("2026-11-26-alert-installs") { db in
            try db.execute(sql: "ALTER TABLE alert_rules ADD COLUMN installs TEXT NOT NULL DEFAULT 'all' CHECK (installs IN ('all', 'attested'))")
        }
    }
}
