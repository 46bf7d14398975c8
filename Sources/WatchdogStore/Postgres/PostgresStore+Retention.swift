import PostgresClient

extension PostgresStore {
    /// The seed of retention's advisory lock ("wdrt"), hashed with the schema's name: one node
    /// of a deployment prunes at a time, and deployments in other schemas of the same database
    /// (the tests, one schema each) are not held up by it.
    static let retentionLockKey: Int64 = 0x7764_7274

    /// Drops the oldest day partition of reports that ends before `cutoff` (with its rows'
    /// exactly-once keys); when none is left, deletes up to `limit` older rows of the day the
    /// cutoff falls in (and of the default partition) and of sessions — so what goes is exactly
    /// what the SQLite store prunes, most of it by dropping whole days. Returns the reports and sessions that went; 0 when nothing is that old
    /// or another node holds the retention lock (it is pruning the same rows).
    public func prune(receivedBefore cutoff: Int64, limit: Int) throws -> Int {
        try pool.transaction(attempts: 1) { connection in
            guard try connection.query("SELECT pg_try_advisory_xact_lock(hashtextextended(current_schema(), $1))", [Self.retentionLockKey]).first?.bool(0) == true else { return 0 }
            let lastWholeDay = Self.day(cutoff) - 1     // days ending at or before the cutoff's day start
            let days = try Self.partitionDays(connection).filter { $0 <= lastWholeDay }
            if let day = days.first {
                let name = Self.partitionName(day: day)
                let rows = try connection.query("SELECT count(*) FROM \(name)").first?.int(0) ?? 0
                try connection.query("DELETE FROM report_keys WHERE received_at >= $1 AND received_at < $2", [day * 86_400_000, (day + 1) * 86_400_000])
                try connection.execute("ALTER TABLE reports DETACH PARTITION \(name); DROP TABLE \(name)")
                partitionDays.withLock { _ = $0.remove(day) }
                // Report the drop even for an empty day, so the caller asks again.
                return max(rows, 1)
            }
            var deleted = 0
            // The part of the cutoff's day before it, rows outside every day partition (clocks
            // far off) and sessions, a batch at a time (partition pruning keeps the scan to the
            // partitions that can hold such rows).
            let old = try connection.query("""
                WITH old AS (SELECT app, id FROM reports WHERE received_at < $1 LIMIT $2),
                     keys AS (DELETE FROM report_keys k USING old WHERE k.app = old.app AND k.id = old.id)
                DELETE FROM reports r USING old WHERE r.app = old.app AND r.id = old.id AND r.received_at < $1
                """, [cutoff, limit])
            deleted += old.affected
            let sessions = try connection.query("""
                DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE received_at < $1 ORDER BY received_at LIMIT $2)
                """, [cutoff, limit])
            deleted += sessions.affected
            // The session limits' counts are needed for the current hour only.
            try connection.query("DELETE FROM ingest_hourly_counts WHERE hour < (SELECT max(hour) FROM ingest_hourly_counts) - 48")
            return deleted
        }
    }

    public func pruneDerived(receivedBefore cutoff: Int64, limit: Int) throws -> Int {
        let stale = try pool.withConnection { connection in
            try connection.query("""
                SELECT r.app, r.version, r.build FROM releases r WHERE r.last_received < $1
                AND NOT EXISTS (SELECT 1 FROM release_admissions a WHERE a.app = r.app AND a.version = r.version AND a.build = r.build)
                LIMIT $2
                """, [cutoff, limit]).map { (app: $0.text(0), release: ReleaseID(version: $0.text(1), build: $0.text(2))) }
        }
        var deleted = 0
        for release in stale { deleted += max(1, try deleteRelease(app: release.app, release: release.release)) }
        deleted += try pool.withConnection { connection in
            let origins = try connection.query("""
                DELETE FROM install_origins WHERE (app, install_id) IN (SELECT app, install_id FROM install_origins WHERE last_received_at < $1 LIMIT $2)
                """, [cutoff, limit]).affected
            let counts = try connection.query("""
                DELETE FROM ingest_hourly_counts WHERE (app, scope, key, hour) IN (SELECT app, scope, key, hour FROM ingest_hourly_counts WHERE hour < $1 LIMIT $2)
                """, [Rollup.hour(cutoff), limit]).affected
            return origins + counts
        }
        return deleted
    }

    /// PostgreSQL hands space back by itself (autovacuum; a dropped partition's files go at
    /// once); the database's size in bytes.
    public func reclaimSpace() throws -> Int64 {
        try databaseSize()
    }

    /// The database's size in bytes (`pg_database_size`).
    public func databaseSize() throws -> Int64 {
        try pool.withConnection { connection in
            try connection.query("SELECT pg_database_size(current_database())").first?.integer(0) ?? 0
        }
    }
}
