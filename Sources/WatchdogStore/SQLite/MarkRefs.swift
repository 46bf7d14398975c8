import GRDB

/// The numbers reports and the ingest-side session marks are keyed by instead of repeating text
/// in every row: a release's `release_refs` number and a text's `mark_values` number, for each
/// release and text one transaction touches.
struct MarkRefs {
    /// Numbers of releases and values, by what they stand for.
    struct Numbers {
        var releases: [Rollup.ReleaseKey: Int64] = [:]
        var values: [String: Int64] = [:]

        var isEmpty: Bool { releases.isEmpty && values.isEmpty }

        /// Adds `other`'s numbers, values only while fewer than `valueLimit` are kept (past it,
        /// a value's number is read from `mark_values` by each transaction that needs it).
        mutating func merge(_ other: Numbers, valueLimit: Int) {
            releases.merge(other.releases) { old, _ in old }
            for (value, number) in other.values where values.count < valueLimit { values[value] = values[value] ?? number }
        }
    }

    /// Numbers committed before this transaction.
    let known: Numbers
    /// Numbers this transaction looked up or created; remembered only after it commits.
    private(set) var added = Numbers()

    init(known: Numbers) {
        self.known = known
    }

    mutating func ref(app: String, version: String, build: String, _ db: Database) throws -> Int64 {
        let key = Rollup.ReleaseKey(app: app, version: version, build: build)
        if let ref = known.releases[key] ?? added.releases[key] { return ref }
        let ref = try Self.number(db, sql: """
            INSERT INTO release_refs (app, version, build) VALUES (?, ?, ?)
            ON CONFLICT DO UPDATE SET app = excluded.app
            RETURNING ref
            """, [app, version, build], "no release_refs row for \(app) \(version) (\(build))")
        added.releases[key] = ref
        return ref
    }

    /// The number of a text: an app's id, a kind, screen, channel or keyboard mode (one table for
    /// all of them and every app: the column, or the mark's dimension and release, say which).
    mutating func number(of value: String, _ db: Database) throws -> Int64 {
        if let number = known.values[value] ?? added.values[value] { return number }
        let number = try Self.number(db, sql: """
            INSERT INTO mark_values (value) VALUES (?)
            ON CONFLICT DO UPDATE SET value = excluded.value
            RETURNING number
            """, [value], "no mark_values row for \(value.prefix(200))")
        added.values[value] = number
        return number
    }

    private static func number(_ db: Database, sql: String, _ arguments: StatementArguments, _ missing: @autoclosure () -> String) throws -> Int64 {
        guard let number = try Int64.fetchOne(try db.cachedStatement(sql: sql), arguments: arguments) else {
            throw DatabaseError(resultCode: .SQLITE_INTERNAL, message: missing())
        }
        return number
    }
}
