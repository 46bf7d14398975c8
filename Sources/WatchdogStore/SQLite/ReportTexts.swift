import GRDB

/// The texts a report row holds as numbers (`2026-11-26-numbered-reports`), read back for the
/// rows of one query: a release by its `release_refs` number, an app, kind, screen or channel by
/// its `mark_values` number. Each number is looked up once per query.
struct ReportTexts {
    private var releases: [Int64: Rollup.ReleaseKey] = [:]
    private var values: [Int64: String] = [:]

    /// The `mark_values` number of `text`, `nil` when no report or mark was ever stored with it
    /// (so no row can match a filter on it). Reads only: a reader never hands out numbers.
    static func number(of text: String, _ db: Database) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT number FROM mark_values WHERE value = ?"), arguments: [text])
    }

    /// The `release_refs` number of a release, `nil` when it was never stored.
    static func ref(app: String, version: String, build: String, _ db: Database) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT ref FROM release_refs WHERE app = ? AND version = ? AND build = ?"),
                           arguments: [app, version, build])
    }

    mutating func release(_ ref: Int64, _ db: Database) throws -> Rollup.ReleaseKey {
        if let release = releases[ref] { return release }
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT app, version, build FROM release_refs WHERE ref = ?"), arguments: [ref]) else {
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "a report names release number \(ref), which release_refs does not have")
        }
        let release = Rollup.ReleaseKey(app: row[0], version: row[1], build: row[2])
        releases[ref] = release
        return release
    }

    mutating func value(_ number: Int64, _ db: Database) throws -> String {
        if let value = values[number] { return value }
        guard let value = try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM mark_values WHERE number = ?"), arguments: [number]) else {
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "a report names text number \(number), which mark_values does not have")
        }
        values[number] = value
        return value
    }
}
