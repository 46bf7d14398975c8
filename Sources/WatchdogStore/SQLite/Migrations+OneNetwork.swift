import GRDB

extension Migrations {
    /// One network counts as one network (issue 39). Columns are added only where missing: a
    /// test that takes a data dir back through an older migration (which rebuilds sessions or
    /// the per-install roll-ups) runs these again over the tables it left.
    static func registerOneNetwork(_ migrator: inout DatabaseMigrator) {
        // Each install of a release gets the network its first counted session start of the
        // release came from: verdicts weigh a release by network, and the per-install roll-up is
        // what they read. Rows of before take the network the install was first seen from
        // (`install_origins`), or none.
        migrator.registerMigration("2026-11-27-install-networks") { db in
            try addMissing([("release_installs", "network", "TEXT")], db)
            try db.execute(sql: """
                UPDATE release_installs SET network = (
                    SELECT o.network FROM install_origins o WHERE o.app = release_installs.app AND o.install_id = release_installs.install_id);
                """)
        }
        // Each attestation challenge's client address: an address holds at most a few of its
        // network's, so one flooder does not lock its neighbours out.
        migrator.registerMigration("2026-11-27-challenge-addresses") { db in
            try addMissing([("attest_challenges", "address", "TEXT NOT NULL DEFAULT ''")], db)
            try db.execute(sql: "CREATE INDEX IF NOT EXISTS attest_challenges_by_address ON attest_challenges (app, address)")
        }
        // A session counts as attested only when its start carried the assertion of the key
        // that first attested its install (`attested_keys.owner`); the per-install roll-ups
        // count those apart. Which uploads carried an assertion was not kept before: a counted
        // start of an install received once its owning key was attested is taken as attested
        // (under `observe` and `require` its uploads needed an assertion of that install's
        // since), what came before is not — the history a key could otherwise launder.
        migrator.registerMigration("2026-11-27-attested-sessions") { db in
            try addMissing([("sessions", "attested", "INTEGER NOT NULL DEFAULT 0"), ("attested_keys", "owner", "INTEGER NOT NULL DEFAULT 1"),
                            ("release_installs", "attested_sessions", "INTEGER NOT NULL DEFAULT 0"),
                            ("release_installs", "attested_affected_sessions", "INTEGER NOT NULL DEFAULT 0"),
                            ("release_install_kinds", "attested_affected_sessions", "INTEGER NOT NULL DEFAULT 0")], db)
            try db.execute(sql: """
                UPDATE attested_keys SET owner = 0 WHERE EXISTS (
                    SELECT 1 FROM attested_keys k WHERE k.app = attested_keys.app AND k.install_id = attested_keys.install_id
                    AND (k.attested_at < attested_keys.attested_at OR (k.attested_at = attested_keys.attested_at AND k.key_id < attested_keys.key_id)));
                UPDATE sessions SET attested = 1 WHERE implausible = 0 AND install_id IS NOT NULL AND EXISTS (
                    SELECT 1 FROM attested_keys k WHERE k.app = sessions.app AND k.install_id = sessions.install_id AND k.owner = 1 AND k.attested_at <= sessions.received_at);
                CREATE TEMP TABLE attested_counts AS
                    SELECT app, version, build, install_id, count(*) AS n FROM sessions WHERE attested = 1 GROUP BY app, version, build, install_id;
                UPDATE release_installs SET attested_sessions = (
                    SELECT n FROM attested_counts c WHERE c.app = release_installs.app AND c.version = release_installs.version AND c.build = release_installs.build
                    AND c.install_id = release_installs.install_id)
                WHERE EXISTS (SELECT 1 FROM attested_counts c WHERE c.app = release_installs.app AND c.version = release_installs.version
                              AND c.build = release_installs.build AND c.install_id = release_installs.install_id);
                CREATE TEMP TABLE attested_affected AS
                    SELECT r.app, r.version, r.build, s.install_id, count(*) AS n FROM session_affected_marks m
                    JOIN release_refs r ON r.ref = m.release JOIN sessions s ON s.id = m.session
                    WHERE s.attested = 1 GROUP BY r.app, r.version, r.build, s.install_id;
                UPDATE release_installs SET attested_affected_sessions = (
                    SELECT n FROM attested_affected c WHERE c.app = release_installs.app AND c.version = release_installs.version AND c.build = release_installs.build
                    AND c.install_id = release_installs.install_id)
                WHERE EXISTS (SELECT 1 FROM attested_affected c WHERE c.app = release_installs.app AND c.version = release_installs.version
                              AND c.build = release_installs.build AND c.install_id = release_installs.install_id);
                CREATE TEMP TABLE attested_kinds AS
                    SELECT r.app, r.version, r.build, s.install_id, v.value AS kind, count(*) AS n FROM session_value_marks m
                    JOIN release_refs r ON r.ref = m.release JOIN mark_values v ON v.number = m.value JOIN sessions s ON s.id = m.session
                    WHERE m.dimension = 0 AND s.attested = 1 GROUP BY r.app, r.version, r.build, s.install_id, v.value;
                UPDATE release_install_kinds SET attested_affected_sessions = (
                    SELECT n FROM attested_kinds c WHERE c.app = release_install_kinds.app AND c.version = release_install_kinds.version
                    AND c.build = release_install_kinds.build AND c.install_id = release_install_kinds.install_id AND c.kind = release_install_kinds.kind)
                WHERE EXISTS (SELECT 1 FROM attested_kinds c WHERE c.app = release_install_kinds.app AND c.version = release_install_kinds.version
                              AND c.build = release_install_kinds.build AND c.install_id = release_install_kinds.install_id AND c.kind = release_install_kinds.kind);
                DROP TABLE attested_counts;
                DROP TABLE attested_affected;
                DROP TABLE attested_kinds;
                """)
        }
    }

    /// When the newest row of each release, and the newest session start of each install,
    /// arrived: retention deletes unlisted releases and install origins once those are past its
    /// window (docs/operators.md, "Limits and retention"). Taken from the raw rows still kept.
    static func registerLastReceived(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("2026-11-27-last-received") { db in
            try addMissing([("releases", "last_received", "INTEGER NOT NULL DEFAULT 0"), ("install_origins", "last_received_at", "INTEGER NOT NULL DEFAULT 0")], db)
            try db.execute(sql: """
                CREATE TEMP TABLE release_last AS SELECT app, version, build, max(received_at) AS at FROM (
                    SELECT app, version, build, received_at FROM sessions
                    UNION ALL SELECT f.app, f.version, f.build, r.received_at FROM reports r JOIN release_refs f ON f.ref = r.release)
                    GROUP BY app, version, build;
                CREATE INDEX temp.release_last_key ON release_last (app, version, build);
                UPDATE releases SET last_received = (
                    SELECT at FROM release_last l WHERE l.app = releases.app AND l.version = releases.version AND l.build = releases.build)
                WHERE EXISTS (SELECT 1 FROM release_last l WHERE l.app = releases.app AND l.version = releases.version AND l.build = releases.build);
                CREATE TEMP TABLE install_last AS
                    SELECT app, install_id, max(received_at) AS at FROM sessions WHERE install_id IS NOT NULL GROUP BY app, install_id;
                CREATE INDEX temp.install_last_key ON install_last (app, install_id);
                UPDATE install_origins SET last_received_at = max(first_received_at, coalesce(
                    (SELECT at FROM install_last l WHERE l.app = install_origins.app AND l.install_id = install_origins.install_id), 0));
                DROP TABLE release_last;
                DROP TABLE install_last;
                """)
        }
    }

    /// Adds each column its table does not have yet.
    private static func addMissing(_ columns: [(table: String, column: String, definition: String)], _ db: Database) throws {
        for (table, column, definition) in columns where try !db.columns(in: table).contains(where: { $0.name == column }) {
            try db.execute(sql: "ALTER TABLE \(table) ADD COLUMN \(column) \(definition)")
        }
    }
}
