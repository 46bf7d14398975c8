import Foundation
import GRDB

extension SQLiteStore {
    public func createApp(_ app: String, createdAtMilliseconds: Int64) throws -> Bool {
        try auditedWrite { db in
            try db.execute(sql: "INSERT INTO apps (id, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING", arguments: [app, createdAtMilliseconds])
            return db.changesCount == 1
        }
    }

    public func appExists(_ app: String) throws -> Bool {
        try pool.read { db in try Bool.fetchOne(db, sql: "SELECT 1 FROM apps WHERE id = ?", arguments: [app]) != nil }
    }

    public func addCredential(_ credential: CredentialRecord) throws {
        try auditedWrite { db in
            if let app = credential.app {
                guard try Bool.fetchOne(db, sql: "SELECT 1 FROM apps WHERE id = ?", arguments: [app]) != nil else {
                    throw StoreError.unknownApp(app)
                }
            }
            try db.execute(
                sql: "INSERT INTO credentials (id, role, app, name, secret_hash, created_at, apps) VALUES (?, ?, ?, ?, ?, ?, ?)",
                arguments: [credential.id, credential.role.rawValue, credential.app, credential.name, Data(credential.secretHash), credential.createdAt,
                            credential.appsColumn]
            )
        }
    }

    public func credential(secretHash: [UInt8]) throws -> CredentialRecord? {
        try pool.read { db in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT * FROM credentials WHERE secret_hash = ? AND revoked_at IS NULL", arguments: [Data(secretHash)]
            ) else { return nil }
            guard let role = CredentialRole(rawValue: row["role"]) else { return nil }
            let hash: Data = row["secret_hash"]
            return CredentialRecord(id: row["id"], role: role, app: row["app"], name: row["name"], secretHash: Array(hash), createdAt: row["created_at"],
                                    apps: CredentialRecord.apps(column: row["apps"]))
        }
    }

    public func revokeIngestKey(app: String, keyID: String, atMilliseconds: Int64) throws -> Bool {
        try auditedWrite { db in
            try db.execute(
                sql: "UPDATE credentials SET revoked_at = ? WHERE id = ? AND app = ? AND role = 'ingest' AND revoked_at IS NULL",
                arguments: [atMilliseconds, keyID, app]
            )
            return db.changesCount == 1
        }
    }

    public func configDocuments() throws -> [ConfigRecord] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM config_documents").map { row in
                ConfigRecord(app: row["app"], version: row["version"], document: row["document"], updatedAt: row["updated_at"], updatedBy: row["updated_by"])
            }
        }
    }

    public func saveConfig(_ record: ConfigRecord, expectedVersion: Int, before: String?) throws {
        try auditedWrite { db in
            let current = try Int.fetchOne(db, sql: "SELECT version FROM config_documents WHERE app = ?", arguments: [record.app]) ?? 0
            guard current == expectedVersion else { throw StoreError.conflict(currentVersion: current) }
            try db.execute(sql: """
                INSERT INTO config_documents (app, version, document, updated_at, updated_by) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (app) DO UPDATE SET version = excluded.version, document = excluded.document,
                    updated_at = excluded.updated_at, updated_by = excluded.updated_by
                """, arguments: [record.app, record.version, record.document, record.updatedAt, record.updatedBy])
            try db.execute(
                sql: "INSERT INTO config_changes (app, version, changed_at, changed_by, before, after, note) VALUES (?, ?, ?, ?, ?, ?, ?)",
                arguments: [record.app, record.version, record.updatedAt, record.updatedBy, before, record.document, record.note]
            )
        }
    }

    public func configVersions(app: String, before: Int?, limit: Int) throws -> [ConfigVersion] {
        try pool.read { db in
            // The primary key (app, version) is walked backwards; no document is read.
            try Row.fetchAll(db, sql: """
                SELECT version, changed_at, changed_by, note FROM config_changes WHERE app = ? AND version < ? ORDER BY version DESC LIMIT ?
                """, arguments: [app, before ?? Int.max, limit]).map { ConfigVersion(version: $0[0], changedAt: $0[1], changedBy: $0[2], note: $0[3]) }
        }
    }

    public func configChange(app: String, version: Int) throws -> ConfigChange? {
        try pool.read { db in
            try Row.fetchOne(db, sql: "SELECT app, version, changed_at, changed_by, before, after, note FROM config_changes WHERE app = ? AND version = ?",
                             arguments: [app, version]).map(Self.configChange)
        }
    }

    private static func configChange(_ row: Row) -> ConfigChange {
        ConfigChange(app: row[0], version: row[1], changedAt: row[2], changedBy: row[3], before: row[4], after: row[5], note: row[6])
    }

    public func testCrashCounts(day: Int64, limit: Int) throws -> [TestCrashCount] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT app, install_id, crashes FROM test_crash_daily WHERE day = ? LIMIT ?", arguments: [day, limit]).map { row in
                TestCrashCount(app: row[0], installID: row[1], crashes: row[2])
            }
        }
    }

    public func testCrashCount(app: String, installID: String, day: Int64) throws -> Int {
        try pool.read { db in
            try Int.fetchOne(db, sql: "SELECT crashes FROM test_crash_daily WHERE app = ? AND day = ? AND install_id = ?",
                             arguments: [app, day, installID]) ?? 0
        }
    }

    public func recentInstalls(app: String, since: Int64, limit: Int) throws -> [RecentInstall] {
        try pool.read { db in
            // The latest session start per install: its release is the one the install runs now.
            try Row.fetchAll(db, sql: """
                SELECT install_id, version, build, channel, idiom, max(started_at) FROM sessions
                WHERE app = ? AND started_at >= ? AND install_id IS NOT NULL
                GROUP BY install_id LIMIT ?
                """, arguments: [app, since, limit]).map { row in
                RecentInstall(installID: row[0], release: ReleaseID(version: row[1], build: row[2]), channel: row[3], idiom: row[4])
            }
        }
    }

    public func credential(id: String) throws -> CredentialRecord? {
        try pool.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT id, role, app, name, secret_hash, created_at, apps FROM credentials WHERE id = ? AND revoked_at IS NULL",
                                             arguments: [id]),
                  let role = CredentialRole(rawValue: row[1]) else { return nil }
            let hash: Data = row[4]
            return CredentialRecord(id: row[0], role: role, app: row[2], name: row[3], secretHash: Array(hash), createdAt: row[5],
                                    apps: CredentialRecord.apps(column: row[6]))
        }
    }

    public func createSession(_ session: DashboardSession) throws {
        try auditedWrite { db in
            try db.execute(sql: "DELETE FROM dashboard_sessions WHERE expires_at < ?", arguments: [session.createdAt])
            try db.execute(sql: "INSERT INTO dashboard_sessions (id_hash, credential_id, csrf_token, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
                           arguments: [Data(session.idHash), session.credentialID, session.csrfToken, session.createdAt, session.expiresAt])
        }
    }

    public func session(idHash: [UInt8], now: Int64) throws -> DashboardSession? {
        try pool.read { db in
            try Row.fetchOne(db, sql: """
                SELECT s.credential_id, s.csrf_token, s.created_at, s.expires_at FROM dashboard_sessions s
                JOIN credentials c ON c.id = s.credential_id AND c.revoked_at IS NULL
                WHERE s.id_hash = ? AND s.expires_at > ?
                """, arguments: [Data(idHash), now]).map { row in
                DashboardSession(idHash: idHash, credentialID: row[0], csrfToken: row[1], createdAt: row[2], expiresAt: row[3])
            }
        }
    }

    public func deleteSession(idHash: [UInt8]) throws {
        try auditedWrite { db in try db.execute(sql: "DELETE FROM dashboard_sessions WHERE id_hash = ?", arguments: [Data(idHash)]) }
    }

    public func createLoginLink(codeHash: [UInt8], credentialID: String, expiresAt: Int64) throws {
        try auditedWrite { db in
            try db.execute(sql: "INSERT INTO login_links (code_hash, credential_id, expires_at) VALUES (?, ?, ?)",
                           arguments: [Data(codeHash), credentialID, expiresAt])
        }
    }

    public func consumeLoginLink(codeHash: [UInt8], now: Int64) throws -> String? {
        try auditedWrite { db in
            defer { try? db.execute(sql: "DELETE FROM login_links WHERE expires_at < ?", arguments: [now]) }
            guard let credential = try String.fetchOne(db, sql: "SELECT credential_id FROM login_links WHERE code_hash = ? AND expires_at > ?",
                                                       arguments: [Data(codeHash), now]) else { return nil }
            try db.execute(sql: "DELETE FROM login_links WHERE code_hash = ?", arguments: [Data(codeHash)])
            return credential
        }
    }

    public func prune(receivedBefore cutoff: Int64, limit: Int) throws -> Int {
        try auditedWrite { db in
            var deleted = 0
            for table in ["reports", "sessions"] {
                // The oldest rows by arrival order (rowid), a page at a time: a bounded scan
                // even when nothing is old enough (a `WHERE received_at < ?` alone would read
                // the whole table to find nothing).
                let page = try Row.fetchAll(db, sql: "SELECT rowid, received_at FROM \(table) ORDER BY rowid LIMIT ?", arguments: [limit])
                let old: [Int64] = page.compactMap { row in
                    let receivedAt: Int64 = row[1]
                    return receivedAt < cutoff ? row[0] as Int64 : nil
                }
                guard !old.isEmpty else { continue }
                for start in stride(from: 0, to: old.count, by: 500) {
                    let chunk = Array(old[start..<min(start + 500, old.count)])
                    try db.execute(sql: "DELETE FROM \(table) WHERE rowid IN (\(Array(repeating: "?", count: chunk.count).joined(separator: ",")))",
                                   arguments: StatementArguments(chunk))
                }
                deleted += old.count
            }
            let day = cutoff / 86_400_000
            try db.execute(sql: "DELETE FROM test_crash_daily WHERE day < ?", arguments: [day - 2])
            // The session limits' counts are needed for the current hour only.
            try db.execute(sql: "DELETE FROM ingest_hourly_counts WHERE hour < (SELECT max(hour) FROM ingest_hourly_counts) - 48")
            return deleted
        }
    }

    public func pruneDerived(receivedBefore cutoff: Int64, limit: Int) throws -> Int {
        let stale = try pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT r.app, r.version, r.build FROM releases r WHERE r.last_received < ?
                AND NOT EXISTS (SELECT 1 FROM release_admissions a WHERE a.app = r.app AND a.version = r.version AND a.build = r.build)
                LIMIT ?
                """, arguments: [cutoff, limit]).map { (app: $0[0] as String, release: ReleaseID(version: $0[1], build: $0[2])) }
        }
        var deleted = 0
        for release in stale { deleted += max(1, try deleteRelease(app: release.app, release: release.release)) }
        deleted += try pool.write { db in
            try db.execute(sql: """
                DELETE FROM install_origins WHERE (app, install_id) IN (SELECT app, install_id FROM install_origins WHERE last_received_at < ? LIMIT ?)
                """, arguments: [cutoff, limit])
            var rows = db.changesCount
            try db.execute(sql: """
                DELETE FROM ingest_hourly_counts WHERE (app, scope, key, hour) IN (SELECT app, scope, key, hour FROM ingest_hourly_counts WHERE hour < ? LIMIT ?)
                """, arguments: [Rollup.hour(cutoff), limit])
            rows += db.changesCount
            return rows
        }
        return deleted
    }

    public func reclaimSpace() throws -> Int64 {
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA incremental_vacuum")
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            let pages = try Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            let size = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
            return pages * size
        }
    }

    public func revokeCredentials(id: String?, name: String?, atMilliseconds: Int64) throws -> Int {
        try auditedWrite { db in
            try db.execute(sql: """
                UPDATE credentials SET revoked_at = ? WHERE revoked_at IS NULL AND (id = ? OR name = ?)
                """, arguments: [atMilliseconds, id, name])
            let revoked = db.changesCount
            try db.execute(sql: "DELETE FROM dashboard_sessions WHERE credential_id IN (SELECT id FROM credentials WHERE revoked_at IS NOT NULL)")
            return revoked
        }
    }
}
