import Foundation
import GRDB

extension SQLiteStore {
    public func issueAttestChallenge(app: String, hash: [UInt8], network: String, address: String, expiresAt: Int64, now: Int64,
                                     maximumPerNetwork: Int, maximumPerAddress: Int) throws -> Bool {
        try auditedWrite { db in
            try db.execute(sql: "DELETE FROM attest_challenges WHERE app = ? AND expires_at <= ?", arguments: [app, now])
            let byNetwork = try Int.fetchOne(db, sql: "SELECT count(*) FROM attest_challenges WHERE app = ? AND network = ?", arguments: [app, network]) ?? 0
            let byAddress = try Int.fetchOne(db, sql: "SELECT count(*) FROM attest_challenges WHERE app = ? AND address = ?", arguments: [app, address]) ?? 0
            guard byNetwork < maximumPerNetwork, byAddress < maximumPerAddress else { return false }
            try db.execute(sql: "INSERT INTO attest_challenges (app, hash, network, address, expires_at) VALUES (?, ?, ?, ?, ?)",
                           arguments: [app, Data(hash), network, address, expiresAt])
            return true
        }
    }

    public func consumeAttestChallenge(app: String, hash: [UInt8], now: Int64) throws -> ChallengeUse {
        try auditedWrite { db in
            guard let expiresAt = try Int64.fetchOne(db, sql: "SELECT expires_at FROM attest_challenges WHERE app = ? AND hash = ?", arguments: [app, Data(hash)]) else {
                return .unknown
            }
            try db.execute(sql: "DELETE FROM attest_challenges WHERE app = ? AND hash = ?", arguments: [app, Data(hash)])
            return expiresAt > now ? .consumed : .expired
        }
    }

    public func saveAttestedKey(_ key: AttestedKey) throws -> AttestedKeySave {
        try auditedWrite { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM attested_keys WHERE app = ? AND key_id = ?", arguments: [key.app, Data(key.keyID)]) != nil {
                return .keyExists
            }
            let owner = try Bool.fetchOne(db, sql: "SELECT 1 FROM attested_keys WHERE app = ? AND install_id = ? AND owner = 1", arguments: [key.app, key.installID]) == nil
            try db.execute(sql: """
                INSERT INTO attested_keys (app, key_id, install_id, public_key, counter, environment, attested_at, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [key.app, Data(key.keyID), key.installID, Data(key.publicKey), key.counter, key.environment, key.attestedAt, owner])
            return .saved(owner: owner)
        }
    }

    public func attestedKey(app: String, keyID: [UInt8]) throws -> AttestedKey? {
        try pool.read { db in
            try Row.fetchOne(db, sql: "SELECT install_id, public_key, counter, environment, attested_at, owner FROM attested_keys WHERE app = ? AND key_id = ?",
                             arguments: [app, Data(keyID)]).map { row in
                var key = AttestedKey(app: app, keyID: keyID, installID: row[0], publicKey: Array(row[1] as Data), counter: row[2], environment: row[3], attestedAt: row[4])
                key.owner = row[5]
                return key
            }
        }
    }

    /// Moves the assertion's key's counter on if it is below the assertion's, in the ingest
    /// transaction (`ingest`); `false` when it does not move (a replay, an older assertion, or
    /// the same one taken by an earlier batch), and then none of the batch's items are stored.
    func advance(_ assertion: AssertionCounter, _ db: Database) throws -> Bool {
        let statement = try db.cachedStatement(sql: "UPDATE attested_keys SET counter = ? WHERE app = ? AND key_id = ? AND counter < ?")
        try statement.execute(arguments: [assertion.counter, assertion.app, Data(assertion.keyID), assertion.counter])
        return db.changesCount > 0
    }

    public func attestedInstalls(app: String) throws -> Set<String> {
        try pool.read { db in Set(try String.fetchAll(db, sql: "SELECT DISTINCT install_id FROM attested_keys WHERE app = ?", arguments: [app])) }
    }

    public func attestedSessions(app: String, releases: [ReleaseID]) throws -> [ReleaseID: Int] {
        try pool.read { db in
            let statement = try db.cachedStatement(sql: """
                SELECT sum(attested_sessions) FROM release_installs WHERE app = ?1 AND version = ?2 AND build = ?3 AND attested_sessions > 0
                """)
            var sessions: [ReleaseID: Int] = [:]
            for release in releases {
                if let count = try Int.fetchOne(statement, arguments: [app, release.version, release.build]) { sessions[release] = count }
            }
            return sessions
        }
    }

    public func attestationSettings(app: String) throws -> String? {
        try pool.read { db in try String.fetchOne(db, sql: "SELECT settings FROM app_attestation WHERE app = ?", arguments: [app]) }
    }

    public func saveAttestationSettings(app: String, json: String) throws {
        try auditedWrite { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM apps WHERE id = ?", arguments: [app]) != nil else { throw StoreError.unknownApp(app) }
            try db.execute(sql: "INSERT INTO app_attestation (app, settings) VALUES (?, ?) ON CONFLICT DO UPDATE SET settings = excluded.settings",
                           arguments: [app, json])
        }
    }
}
