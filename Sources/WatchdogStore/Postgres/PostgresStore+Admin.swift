import PostgresClient

/// Apps, credentials, dashboard sessions, sign-in links and remote config — the same behaviour
/// as `SQLiteStore+Admin.swift`, made safe for several nodes writing at once: what SQLite gets
/// from its single writer, these get from row locks and single-statement writes.
extension PostgresStore {
    /// Creates an app; `false` if it already existed.
    public func createApp(_ app: String, createdAtMilliseconds: Int64) throws -> Bool {
        try auditedConnection { connection in
            try connection.query("INSERT INTO apps (id, created_at) VALUES ($1, $2) ON CONFLICT DO NOTHING", [app, createdAtMilliseconds]).affected == 1
        }
    }

    public func appExists(_ app: String) throws -> Bool {
        try auditedConnection { connection in
            try !connection.query("SELECT 1 FROM apps WHERE id = $1", [app]).isEmpty
        }
    }

    /// - Throws: `StoreError.unknownApp` when the credential names an app that does not exist.
    public func addCredential(_ credential: CredentialRecord) throws {
        try auditedConnection { connection in
            // One statement: the app is checked where the row is inserted (apps are never
            // deleted, and the foreign key backs it).
            let inserted = try connection.query("""
                INSERT INTO credentials (id, role, app, name, secret_hash, created_at, apps)
                SELECT $1::text, $2::text, $3::text, $4::text, $5::bytea, $6::bigint, $7::text
                WHERE $3::text IS NULL OR EXISTS (SELECT 1 FROM apps WHERE id = $3::text)
                """, [credential.id, credential.role.rawValue, credential.app, credential.name, credential.secretHash, credential.createdAt,
                      credential.appsColumn]).affected
            if inserted == 0, let app = credential.app { throw StoreError.unknownApp(app) }
        }
    }

    /// The live (not revoked) credential whose secret hashes to `secretHash`.
    public func credential(secretHash: [UInt8]) throws -> CredentialRecord? {
        try auditedConnection { connection in
            try connection.query("""
                SELECT id, role, app, name, secret_hash, created_at, apps FROM credentials WHERE secret_hash = $1 AND revoked_at IS NULL
                """, [secretHash]).first.flatMap(Self.credential)
        }
    }

    /// A live (not revoked) credential by its id.
    public func credential(id: String) throws -> CredentialRecord? {
        try auditedConnection { connection in
            try connection.query("""
                SELECT id, role, app, name, secret_hash, created_at, apps FROM credentials WHERE id = $1 AND revoked_at IS NULL
                """, [id]).first.flatMap(Self.credential)
        }
    }

    /// `id, role, app, name, secret_hash, created_at, apps`; `nil` for a role this build does not know.
    private static func credential(_ row: PostgresRow) -> CredentialRecord? {
        guard let role = CredentialRole(rawValue: row.text(1)) else { return nil }
        return CredentialRecord(id: row.text(0), role: role, app: row.optionalText(2), name: row.text(3), secretHash: row.bytes(4), createdAt: row.integer(5),
                                apps: CredentialRecord.apps(column: row.optionalText(6)))
    }

    /// Saves a dashboard session (its id only as a hash), dropping the expired ones.
    public func createSession(_ session: DashboardSession) throws {
        try auditedTransaction { connection in
            try connection.query("DELETE FROM dashboard_sessions WHERE expires_at < $1", [session.createdAt])
            try connection.query("""
                INSERT INTO dashboard_sessions (id_hash, credential_id, csrf_token, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)
                """, [session.idHash, session.credentialID, session.csrfToken, session.createdAt, session.expiresAt])
        }
    }

    /// The unexpired session with this id hash, if its credential is still live.
    public func session(idHash: [UInt8], now: Int64) throws -> DashboardSession? {
        try auditedConnection { connection in
            try connection.query("""
                SELECT s.credential_id, s.csrf_token, s.created_at, s.expires_at FROM dashboard_sessions s
                JOIN credentials c ON c.id = s.credential_id AND c.revoked_at IS NULL
                WHERE s.id_hash = $1 AND s.expires_at > $2
                """, [idHash, now]).first.map { row in
                DashboardSession(idHash: idHash, credentialID: row.text(0), csrfToken: row.text(1), createdAt: row.integer(2), expiresAt: row.integer(3))
            }
        }
    }

    public func deleteSession(idHash: [UInt8]) throws {
        try auditedConnection { connection in
            _ = try connection.query("DELETE FROM dashboard_sessions WHERE id_hash = $1", [idHash])
        }
    }

    /// Saves a one-time sign-in link (its code only as a hash).
    public func createLoginLink(codeHash: [UInt8], credentialID: String, expiresAt: Int64) throws {
        try auditedConnection { connection in
            _ = try connection.query("INSERT INTO login_links (code_hash, credential_id, expires_at) VALUES ($1, $2, $3)", [codeHash, credentialID, expiresAt])
        }
    }

    /// Uses up a sign-in link: the credential id if the link existed and had not expired.
    /// Atomic: of two nodes consuming the same code at once, one gets the id, the other `nil`.
    public func consumeLoginLink(codeHash: [UInt8], now: Int64) throws -> String? {
        try auditedConnection { connection in
            // As in SQLite, expired links are swept afterwards whatever the outcome, and a
            // failed sweep does not undo the sign-in (it is a statement of its own).
            defer { _ = try? connection.query("DELETE FROM login_links WHERE expires_at < $1", [now]) }
            return try connection.query("DELETE FROM login_links WHERE code_hash = $1 AND expires_at > $2 RETURNING credential_id",
                                        [codeHash, now]).first?.text(0)
        }
    }

    /// Revokes live credentials by id or by exact name, and ends the dashboard sessions of
    /// every revoked credential; how many were revoked.
    public func revokeCredentials(id: String?, name: String?, atMilliseconds: Int64) throws -> Int {
        try auditedTransaction { connection in
            let revoked = try connection.query("""
                UPDATE credentials SET revoked_at = $1 WHERE revoked_at IS NULL AND (id = $2::text OR name = $3::text)
                """, [atMilliseconds, id, name]).affected
            try connection.query("DELETE FROM dashboard_sessions WHERE credential_id IN (SELECT id FROM credentials WHERE revoked_at IS NOT NULL)")
            return revoked
        }
    }

    /// Revokes an ingest key of an app; `false` if there was no such live key.
    public func revokeIngestKey(app: String, keyID: String, atMilliseconds: Int64) throws -> Bool {
        try auditedConnection { connection in
            try connection.query("""
                UPDATE credentials SET revoked_at = $1 WHERE id = $2 AND app = $3 AND role = 'ingest' AND revoked_at IS NULL
                """, [atMilliseconds, keyID, app]).affected == 1
        }
    }

    // MARK: Remote config

    /// Every app's stored config document, by app.
    public func configDocuments() throws -> [ConfigRecord] {
        try auditedConnection { connection in
            try connection.query("SELECT app, version, document, updated_at, updated_by FROM config_documents ORDER BY app COLLATE \"C\"").map { row in
                ConfigRecord(app: row.text(0), version: row.int(1), document: row.text(2), updatedAt: row.integer(3), updatedBy: row.text(4))
            }
        }
    }

    /// Saves a new version of an app's config document and its audit row, if the stored
    /// version is still `expectedVersion` (0: none stored yet).
    ///
    /// Race-free across nodes: the stored row is locked (`FOR UPDATE`) before its version is
    /// compared, so a concurrent save waits and then sees the new version; the first version
    /// is inserted only if absent, and a node that loses that race reads the winner's version.
    /// - Throws: `StoreError.conflict` when another change came first.
    public func saveConfig(_ record: ConfigRecord, expectedVersion: Int, before: String?) throws {
        try auditedTransaction { connection in
            let stored = try connection.query("SELECT version FROM config_documents WHERE app = $1 FOR UPDATE", [record.app]).first?.int(0)
            let current = stored ?? 0
            guard current == expectedVersion else { throw StoreError.conflict(currentVersion: current) }
            if stored == nil {
                let inserted = try connection.query("""
                    INSERT INTO config_documents (app, version, document, updated_at, updated_by) VALUES ($1, $2, $3, $4, $5)
                    ON CONFLICT (app) DO NOTHING
                    """, [record.app, record.version, record.document, record.updatedAt, record.updatedBy]).affected
                if inserted == 0 {
                    // Another node stored a first version meanwhile (and committed: the insert
                    // waited for it); this statement sees it.
                    let winner = try connection.query("SELECT version FROM config_documents WHERE app = $1", [record.app]).first?.int(0) ?? 0
                    throw StoreError.conflict(currentVersion: winner)
                }
            } else {
                try connection.query("""
                    UPDATE config_documents SET version = $2, document = $3, updated_at = $4, updated_by = $5 WHERE app = $1
                    """, [record.app, record.version, record.document, record.updatedAt, record.updatedBy])
            }
            try connection.query("""
                INSERT INTO config_changes (app, version, changed_at, changed_by, before, after, note) VALUES ($1, $2, $3, $4, $5, $6, $7)
                """, [record.app, record.version, record.updatedAt, record.updatedBy, before, record.document, record.note])
            // Delivered to every node's listener when (and only if) this commits.
            try connection.query("SELECT pg_notify($1, $2)", [PostgresChangeWatch.configChannel, record.app])
        }
    }

    /// An app's config versions without their documents, newest first, older than `before`.
    public func configVersions(app: String, before: Int?, limit: Int) throws -> [ConfigVersion] {
        try auditedConnection { connection in
            try connection.query("""
                SELECT version, changed_at, changed_by, note FROM config_changes WHERE app = $1 AND version < $2 ORDER BY version DESC LIMIT $3
                """, [app, before ?? Int.max, limit]).map { ConfigVersion(version: $0.int(0), changedAt: $0.integer(1), changedBy: $0.text(2), note: $0.optionalText(3)) }
        }
    }

    /// One change (version) of an app's config.
    public func configChange(app: String, version: Int) throws -> ConfigChange? {
        try auditedConnection { connection in
            try connection.query("""
                SELECT app, version, changed_at, changed_by, before, after, note FROM config_changes WHERE app = $1 AND version = $2
                """, [app, version]).first.map(Self.configChange)
        }
    }

    private static func configChange(_ row: PostgresRow) -> ConfigChange {
        ConfigChange(app: row.text(0), version: row.int(1), changedAt: row.integer(2), changedBy: row.text(3), before: row.optionalText(4), after: row.text(5), note: row.optionalText(6))
    }

    /// Test crashes reported per install on a UTC day (days since the epoch) — for every app;
    /// at most `limit` rows, by app and install.
    public func testCrashCounts(day: Int64, limit: Int) throws -> [TestCrashCount] {
        try auditedConnection { connection in
            try connection.query("""
                SELECT app, install_id, crashes FROM test_crash_daily WHERE day = $1
                ORDER BY app COLLATE "C", install_id COLLATE "C" LIMIT $2
                """, [day, limit]).map { row in
                TestCrashCount(app: row.text(0), installID: row.text(1), crashes: row.int(2))
            }
        }
    }

    /// Test crashes one install of an app reported on a UTC day.
    public func testCrashCount(app: String, installID: String, day: Int64) throws -> Int {
        try auditedConnection { connection in
            try connection.query("SELECT crashes FROM test_crash_daily WHERE app = $1 AND day = $2 AND install_id = $3", [app, day, installID]).first?.int(0) ?? 0
        }
    }

    /// Distinct installs with a session start since a time, with their release, channel and
    /// idiom, by install id.
    public func recentInstalls(app: String, since: Int64, limit: Int) throws -> [RecentInstall] {
        try auditedConnection { connection in
            // The latest session start per install: its release is the one the install runs now.
            try connection.query("""
                SELECT DISTINCT ON (install_id COLLATE "C") install_id, version, build, channel, idiom FROM sessions
                WHERE app = $1 AND started_at >= $2 AND install_id IS NOT NULL
                ORDER BY install_id COLLATE "C", started_at DESC, received_at DESC, id COLLATE "C" DESC LIMIT $3
                """, [app, since, limit]).map { row in
                RecentInstall(installID: row.text(0), release: ReleaseID(version: row.text(1), build: row.text(2)),
                              channel: row.optionalText(3), idiom: row.optionalText(4))
            }
        }
    }
}
