import GRDB

extension Migrations {
    /// Triage of issues (issue 42, point 1): one row per app and fingerprint, what a person last
    /// said about it — resolved (in a listed release, or the next one), muted (until a time, or
    /// until more sessions are affected), or open again — with their note. `IssueTriageRecord`
    /// says what each column holds; the history is the audit log's.
    static func registerTriage(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("2026-11-28-triage") { db in
            try db.execute(sql: """
                CREATE TABLE issue_triage (
                    app TEXT NOT NULL REFERENCES apps(id),
                    fingerprint TEXT NOT NULL,
                    resolution TEXT NOT NULL CHECK (resolution IN ('resolved', 'open')),
                    resolved_version TEXT,
                    resolved_build TEXT,
                    next_release INTEGER NOT NULL DEFAULT 0,
                    resolved_at INTEGER,
                    mute_until INTEGER,
                    mute_sessions INTEGER,
                    mute_baseline INTEGER NOT NULL DEFAULT 0,
                    note TEXT NOT NULL DEFAULT '',
                    changed_by TEXT NOT NULL,
                    changed_at INTEGER NOT NULL,
                    PRIMARY KEY (app, fingerprint)
                ) WITHOUT ROWID;
                """)
        }
    }
}
