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

        /// Adds `other`'s numbers, each kind only while fewer than its limit are kept (past it, a
        /// release's or value's number is read from `release_refs` or `mark_values` by each
        /// transaction that needs it).
        mutating func merge(_ other: Numbers, valueLimit: Int, releaseLimit: Int) {
            for (release, number) in other.releases where releases.count < releaseLimit { releases[release] = releases[release] ?? number }
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

    /// The numbers a report row is keyed by (`2026-11-26-numbered-reports`).
    struct ReportNumbers {
        var release: Int64
        var app: Int64
        var kind: Int64
        var screen: Int64?
        var channel: Int64?
    }

    /// `report`'s numbers when every one is known already (committed before this transaction,
    /// or added by it), from memory alone; `nil` when storing it would need a number looked up
    /// or handed out — then the caller first asks whether the report is a duplicate.
    func knownNumbers(of report: ReportRecord) -> ReportNumbers? {
        let key = Rollup.ReleaseKey(app: report.app, version: report.version, build: report.build)
        guard let release = known.releases[key] ?? added.releases[key], let app = value(report.app), let kind = value(report.kind) else { return nil }
        var numbers = ReportNumbers(release: release, app: app, kind: kind)
        if let screen = report.screen {
            guard let number = value(screen) else { return nil }
            numbers.screen = number
        }
        if let channel = report.channel {
            guard let number = value(channel) else { return nil }
            numbers.channel = number
        }
        return numbers
    }

    /// `report`'s numbers, handing out those its texts do not have yet.
    mutating func numbers(of report: ReportRecord, _ db: Database) throws -> ReportNumbers {
        ReportNumbers(release: try ref(app: report.app, version: report.version, build: report.build, db),
                      app: try number(of: report.app, db), kind: try number(of: report.kind, db),
                      screen: try report.screen.map { try number(of: $0, db) }, channel: try report.channel.map { try number(of: $0, db) })
    }

    private func value(_ text: String) -> Int64? {
        known.values[text] ?? added.values[text]
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
