import GRDB

/// The `release_refs` number of each release one transaction touches: the ingest-side session
/// marks are keyed by it instead of repeating app, version and build in every row.
struct ReleaseRefs {
    /// Refs committed before this transaction.
    let known: [Rollup.ReleaseKey: Int64]
    /// Refs this transaction looked up or created; remembered only after it commits.
    private(set) var added: [Rollup.ReleaseKey: Int64] = [:]

    init(known: [Rollup.ReleaseKey: Int64]) {
        self.known = known
    }

    mutating func ref(app: String, version: String, build: String, _ db: Database) throws -> Int64 {
        let key = Rollup.ReleaseKey(app: app, version: version, build: build)
        if let ref = known[key] ?? added[key] { return ref }
        let insert = try db.cachedStatement(sql: """
            INSERT INTO release_refs (app, version, build) VALUES (?, ?, ?)
            ON CONFLICT DO UPDATE SET app = excluded.app
            RETURNING ref
            """)
        guard let ref = try Int64.fetchOne(insert, arguments: [app, version, build]) else {
            throw DatabaseError(resultCode: .SQLITE_INTERNAL, message: "no release_refs row for \(app) \(version) (\(build))")
        }
        added[key] = ref
        return ref
    }
}
