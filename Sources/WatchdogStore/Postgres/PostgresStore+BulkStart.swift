import PostgresClient

/// Day 0 of a release in Over time, kept once set (issue 44, point 4).
extension PostgresStore {
    public func keptBulkStart(app: String, release: ReleaseID) throws -> Int64? {
        try pool.withConnection { connection in
            try connection.query("SELECT bulk_start_hour FROM releases WHERE app = $1 AND version = $2 AND build = $3",
                                 [app, release.version, release.build]).first?.optionalInteger(0)
        }
    }

    public func keepBulkStart(app: String, release: ReleaseID, hour: Int64) throws -> Int64? {
        try pool.withConnection { connection in
            // One statement: of two nodes keeping at once, the first's stays and both return it.
            try connection.query("""
                UPDATE releases SET bulk_start_hour = coalesce(bulk_start_hour, $4) WHERE app = $1 AND version = $2 AND build = $3
                RETURNING bulk_start_hour
                """, [app, release.version, release.build, hour]).first?.optionalInteger(0)
        }
    }
}
