import GRDB

extension Migrations {
    /// Attested installs (docs/security.md, "Attested installs"): outstanding attestation challenges
    /// (their SHA-256, usable once, for minutes), the App Attest keys verified per install, and
    /// each app's attestation settings.
    static func registerAttestation(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("2026-11-26-attestation") { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS attest_challenges (
                    app TEXT NOT NULL,
                    hash BLOB NOT NULL,
                    network TEXT NOT NULL,
                    expires_at INTEGER NOT NULL,
                    PRIMARY KEY (app, hash)
                ) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS attest_challenges_by_network ON attest_challenges (app, network, expires_at);
                CREATE TABLE IF NOT EXISTS attested_keys (
                    app TEXT NOT NULL,
                    key_id BLOB NOT NULL,
                    install_id TEXT NOT NULL,
                    public_key BLOB NOT NULL,
                    counter INTEGER NOT NULL,
                    environment TEXT NOT NULL,
                    attested_at INTEGER NOT NULL,
                    PRIMARY KEY (app, key_id)
                ) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS attested_keys_by_install ON attested_keys (app, install_id);
                CREATE TABLE IF NOT EXISTS app_attestation (
                    app TEXT PRIMARY KEY REFERENCES apps(id),
                    settings TEXT NOT NULL
                );
                """)
        }
    }
}
