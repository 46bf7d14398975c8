import PostgresClient

extension PostgresStore {
    public func issueAttestChallenge(app: String, hash: [UInt8], network: String, address: String, expiresAt: Int64, now: Int64,
                                     maximumPerNetwork: Int, maximumPerAddress: Int) throws -> Bool {
        try auditedTransaction { connection in
            try connection.query("DELETE FROM attest_challenges WHERE app = $1 AND expires_at <= $2", [app, now])
            // One network's requests for an app (its addresses' with them) are counted one at a
            // time, on every node.
            try connection.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 7))", [app + "\u{1f}" + network])
            let byNetwork = try connection.query("SELECT count(*) FROM attest_challenges WHERE app = $1 AND network = $2", [app, network]).first?.int(0) ?? 0
            let byAddress = try connection.query("SELECT count(*) FROM attest_challenges WHERE app = $1 AND address = $2", [app, address]).first?.int(0) ?? 0
            guard byNetwork < maximumPerNetwork, byAddress < maximumPerAddress else { return false }
            try connection.query("INSERT INTO attest_challenges (app, hash, network, address, expires_at) VALUES ($1, $2, $3, $4, $5)",
                                 [app, hash, network, address, expiresAt])
            return true
        }
    }

    public func consumeAttestChallenge(app: String, hash: [UInt8], now: Int64) throws -> ChallengeUse {
        try auditedConnection { connection in
            guard let row = try connection.query("DELETE FROM attest_challenges WHERE app = $1 AND hash = $2 RETURNING expires_at", [app, hash]).first else {
                return .unknown
            }
            return row.integer(0) > now ? .consumed : .expired
        }
    }

    public func saveAttestedKey(_ key: AttestedKey) throws -> AttestedKeySave {
        try auditedTransaction { connection in
            // One install's attestations are decided one at a time, on every node: the first key owns it.
            try connection.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 11))", [key.app + "\u{1f}" + key.installID])
            if !(try connection.query("SELECT 1 FROM attested_keys WHERE app = $1 AND key_id = $2", [key.app, key.keyID]).isEmpty) { return .keyExists }
            let owner = try connection.query("SELECT 1 FROM attested_keys WHERE app = $1 AND install_id = $2 AND owner", [key.app, key.installID]).isEmpty
            let inserted = try connection.query("""
                INSERT INTO attested_keys (app, key_id, install_id, public_key, counter, environment, attested_at, owner) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                ON CONFLICT DO NOTHING
                """, [key.app, key.keyID, key.installID, key.publicKey, key.counter, key.environment, key.attestedAt, owner]).affected
            return inserted > 0 ? .saved(owner: owner) : .keyExists
        }
    }

    public func attestedKey(app: String, keyID: [UInt8]) throws -> AttestedKey? {
        try auditedConnection { connection in
            try connection.query("SELECT install_id, public_key, counter, environment, attested_at, owner FROM attested_keys WHERE app = $1 AND key_id = $2",
                                 [app, keyID]).first.map { row in
                var key = AttestedKey(app: app, keyID: keyID, installID: row.text(0), publicKey: row.bytes(1), counter: row.integer(2), environment: row.text(3),
                                      attestedAt: row.integer(4))
                key.owner = row.bool(5)
                return key
            }
        }
    }

    /// Moves on the counters of the batches' assertions, first in the ingest transaction, and
    /// answers the batches refused: those whose counter is not above their key's, as stored or
    /// as an earlier batch of the transaction left it (request order). The keys' rows are
    /// locked in key order, so nodes committing at once wait for each other without a cycle,
    /// and a node that waited reads the counter the other one committed.
    func advanceCounters(of batches: [IngestBatch], _ connection: PostgresConnection) throws -> Set<Int> {
        struct Key: Hashable { var app: String, keyID: [UInt8] }
        let asserted = batches.indices.compactMap { index in batches[index].assertion.map { (index, $0) } }
        guard !asserted.isEmpty else { return [] }
        let keys = Array(Set(asserted.map { Key(app: $0.1.app, keyID: $0.1.keyID) }))
        var counters: [Key: Int64] = [:]
        for row in try connection.query("""
            SELECT app, key_id, counter FROM attested_keys WHERE (app, key_id) IN (SELECT * FROM unnest($1::text[], $2::bytea[]))
            ORDER BY app, key_id FOR UPDATE
            """, [PostgresArray.text(keys.map(\.app)), PostgresArray.bytes(keys.map(\.keyID))]) {
            counters[Key(app: row.text(0), keyID: row.bytes(1))] = row.integer(2)
        }
        var refused: Set<Int> = [], moved: Set<Key> = []
        for (index, assertion) in asserted {
            let key = Key(app: assertion.app, keyID: assertion.keyID)
            guard let stored = counters[key], assertion.counter > stored else {
                refused.insert(index)
                continue
            }
            counters[key] = assertion.counter
            moved.insert(key)
        }
        if !moved.isEmpty {
            let rows = Array(moved)
            try connection.query("""
                UPDATE attested_keys AS k SET counter = m.counter FROM unnest($1::text[], $2::bytea[], $3::bigint[]) AS m (app, key_id, counter)
                WHERE k.app = m.app AND k.key_id = m.key_id
                """, [PostgresArray.text(rows.map(\.app)), PostgresArray.bytes(rows.map(\.keyID)), PostgresArray.integer(rows.map { counters[$0] })])
        }
        return refused
    }

    public func attestedInstalls(app: String) throws -> Set<String> {
        try auditedConnection { connection in
            Set(try connection.query("SELECT DISTINCT install_id FROM attested_keys WHERE app = $1", [app]).map { $0.text(0) })
        }
    }

    public func attestedSessions(app: String, releases: [ReleaseID]) throws -> [ReleaseID: Int] {
        try auditedConnection { connection in
            var sessions: [ReleaseID: Int] = [:]
            for release in releases {
                let rows = try connection.query("""
                    SELECT sum(attested_sessions)::bigint FROM release_installs WHERE app = $1 AND version = $2 AND build = $3 AND attested_sessions > 0
                    """, [app, release.version, release.build])
                if let count = rows.first?.optionalInteger(0) { sessions[release] = Int(count) }
            }
            return sessions
        }
    }

    public func attestationSettings(app: String) throws -> String? {
        try auditedConnection { connection in
            try connection.query("SELECT settings FROM app_attestation WHERE app = $1", [app]).first?.text(0)
        }
    }

    public func saveAttestationSettings(app: String, json: String) throws {
        try auditedConnection { connection in
            guard !(try connection.query("SELECT 1 FROM apps WHERE id = $1", [app]).isEmpty) else { throw StoreError.unknownApp(app) }
            try connection.query("INSERT INTO app_attestation (app, settings) VALUES ($1, $2) ON CONFLICT (app) DO UPDATE SET settings = excluded.settings", [app, json])
        }
    }
}
