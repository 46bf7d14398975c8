import GRDB

extension Migrations {
    /// What the public ingest key cannot be trusted with (docs/security.md, "What a holder of the ingest
    /// key can do"): where each session start came from and whether it was counted, the hourly
    /// counts behind the session limits, the networks of each release, which releases are
    /// listed, and each app's admission settings.
    static func registerAdmission(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("2026-11-26-admission") { db in
            // Columns and tables are added only where missing: a test that takes a data dir
            // back through an older migration (which rebuilds reports and sessions) runs this
            // one again over the tables it left.
            for (table, column, definition) in [
                // The network a start arrived from (IPv4 /24, IPv6 /48) and its SessionMarks (0: counted).
                ("sessions", "network", "TEXT"), ("sessions", "implausible", "INTEGER NOT NULL DEFAULT 0"),
                // 1: the report's session had no counted start when it arrived.
                ("reports", "unknown_session", "INTEGER NOT NULL DEFAULT 0"),
                ("releases", "implausible_sessions", "INTEGER NOT NULL DEFAULT 0"), ("releases", "unknown_session_reports", "INTEGER NOT NULL DEFAULT 0"),
            ] where try !db.columns(in: table).contains(where: { $0.name == column }) {
                try db.execute(sql: "ALTER TABLE \(table) ADD COLUMN \(column) \(definition)")
            }
            try db.execute(sql: """

                -- Each install of an app, where it first came from, and whether it came past its
                -- network's limit of new installs (then none of its sessions count).
                CREATE TABLE IF NOT EXISTS install_origins (
                    app TEXT NOT NULL,
                    install_id TEXT NOT NULL,
                    network TEXT,
                    first_received_at INTEGER NOT NULL,
                    implausible INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (app, install_id)
                ) WITHOUT ROWID;
                -- Hourly counts behind the session limits (scope 0: session starts of an install,
                -- 1: new installs from a network), by hour of arrival; pruned after two days.
                CREATE TABLE IF NOT EXISTS ingest_hourly_counts (
                    app TEXT NOT NULL,
                    scope INTEGER NOT NULL,
                    key TEXT NOT NULL,
                    hour INTEGER NOT NULL,
                    count INTEGER NOT NULL,
                    PRIMARY KEY (app, scope, key, hour)
                ) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS ingest_hourly_counts_by_hour ON ingest_hourly_counts (hour);
                -- Counted session starts per network: admission and session concentration.
                CREATE TABLE IF NOT EXISTS release_networks (
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    network TEXT NOT NULL,
                    sessions INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (app, version, build, network)
                ) WITHOUT ROWID;
                -- Listed releases: declared by an admin or CI, or admitted.
                CREATE TABLE IF NOT EXISTS release_admissions (
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('declared', 'admitted')),
                    admitted_by TEXT NOT NULL,
                    admitted_at INTEGER NOT NULL,
                    reason TEXT NOT NULL,
                    PRIMARY KEY (app, version, build)
                ) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS release_admissions_by_time ON release_admissions (app, admitted_by, admitted_at);
                -- Each app's admission settings (JSON; absent: the defaults).
                CREATE TABLE IF NOT EXISTS app_admission (
                    app TEXT PRIMARY KEY REFERENCES apps(id),
                    settings TEXT NOT NULL
                );
                -- A data dir of before: every release it had stays listed.
                INSERT OR IGNORE INTO release_admissions (app, version, build, state, admitted_by, admitted_at, reason)
                    SELECT app, version, build, 'admitted', 'upgrade', CAST(strftime('%s', 'now') AS INTEGER) * 1000, 'listed before admission existed'
                    FROM releases;
                """)
        }
    }
}
