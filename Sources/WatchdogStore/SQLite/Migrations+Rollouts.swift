import GRDB

extension Migrations {
    /// Guarded rollouts of config rules (issue 24): one row per app and rule, its plan, state and
    /// step history as one JSON document the server reads and writes whole, guarded by a
    /// revision number (a compare-and-set: two guards, or a guard and a person, cannot both
    /// apply a step). Config versions gain a note: the guard writes its evidence there.
    static func registerRollouts(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("2026-11-26-rollouts") { db in
            try db.execute(sql: """
                ALTER TABLE config_changes ADD COLUMN note TEXT;
                CREATE TABLE rollouts (
                    app TEXT NOT NULL REFERENCES apps(id),
                    rule_id TEXT NOT NULL,
                    -- Bumped by every save; a save names the revision it read.
                    revision INTEGER NOT NULL,
                    -- active, paused, completed, rolled_back or aborted (also in document).
                    status TEXT NOT NULL,
                    document TEXT NOT NULL,
                    updated_at INTEGER NOT NULL,
                    PRIMARY KEY (app, rule_id)
                ) WITHOUT ROWID;
                """)
        }
    }
}
