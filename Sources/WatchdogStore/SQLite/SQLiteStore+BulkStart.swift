import GRDB

/// Day 0 of a release in Over time, kept once set (issue 44, point 4).
extension SQLiteStore {
    public func keptBulkStart(app: String, release: ReleaseID) throws -> Int64? {
        try pool.read { db in
            try Int64?.fetchOne(db, sql: "SELECT bulk_start_hour FROM releases WHERE app = ? AND version = ? AND build = ?",
                                arguments: [app, release.version, release.build]) ?? nil
        }
    }

    public func keepBulkStart(app: String, release: ReleaseID, hour: Int64) throws -> Int64? {
        try pool.write { db in
            try db.execute(sql: "UPDATE releases SET bulk_start_hour = ? WHERE app = ? AND version = ? AND build = ? AND bulk_start_hour IS NULL",
                           arguments: [hour, app, release.version, release.build])
            return try Int64?.fetchOne(db, sql: "SELECT bulk_start_hour FROM releases WHERE app = ? AND version = ? AND build = ?",
                                       arguments: [app, release.version, release.build]) ?? nil
        }
    }
}
