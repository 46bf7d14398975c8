import Foundation
import GRDB
import PostgresClient

/// Copies an SQLite data dir's database into a PostgreSQL store (`watchdogd store copy`), so a
/// team that started embedded can move to a cluster.
///
/// - The big tables (`reports`, `sessions`) go in chunks of `chunkSize` rows in rowid order,
///   each chunk in one PostgreSQL transaction that also records how far it got in
///   `store_copy_progress`: a copy killed at any point and started again continues after the
///   last committed chunk and stores nothing twice. A report's `sequence` is its SQLite rowid,
///   so pages and exports come in the same order and old cursors stay valid.
/// - Everything else (apps, credentials, config, alerts, roll-ups, session marks) is copied at
///   the end in one transaction that first deletes what a previous attempt may have left, and
///   marks the copy finished.
/// - Ids kept as 16 bytes become lowercase canonical UUID text, TEXT bodies are compressed
///   (`StoredBody`) and BLOB bodies copied as they are, session marks get app, version and build
///   back from `release_refs` and their values' text from `mark_values`, and integer
///   fingerprints their `fp_` text.
///
/// The caller keeps `watchdogd serve` off the source while this runs (the CLI holds the data
/// dir's serve lock). A destination that holds anything but an unfinished copy is refused.
public final class SQLiteToPostgres {
    /// How far a table's copy is, for a progress line.
    public struct Progress: Sendable {
        /// The source table.
        public var table: String
        /// Rows of it in the destination so far (previous attempts included).
        public var copied: Int
        /// Rows of it in the source.
        public var total: Int
        /// Rows copied by this run per second of this run.
        public var rowsPerSecond: Double
    }

    /// Rows of one table (or one app, or one release) on both sides, as the final check counted them.
    public struct Count: Sendable {
        /// A table name, `reports of APP`, `reports of APP VERSION (BUILD)`, or `roll-up reports
        /// of APP VERSION (BUILD)`.
        public var name: String
        /// The count in SQLite. For a roll-up row: the reports of the release copied (what its
        /// roll-up must add up to), or the SQLite roll-up where retention had deleted raw rows.
        public var source: Int
        /// The count in PostgreSQL (for a roll-up row: what its `release_kinds` add up to).
        public var destination: Int
        /// Whether both sides agree.
        public var matches: Bool { source == destination }
    }

    /// What a finished copy did and found.
    public struct Summary: Sendable {
        /// Per table, then reports per release, then roll-up counts that disagree.
        public var counts: [Count]
        /// Rows this run copied (all tables).
        public var rowsCopied: Int
        /// Seconds this run took.
        public var seconds: Double
        /// Whether the run continued a previous, interrupted one.
        public var resumed: Bool
        /// The counts that differ; the copy is good only when this is empty.
        public var mismatches: [Count] { counts.filter { !$0.matches } }
    }

    /// Why the copy will not start, or stopped.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        /// What is wrong, for the person at the terminal.
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// Thrown when `stopAfterChunks` chunks have been committed (tests interrupt a copy so).
    public struct Interrupted: Error, Sendable {}

    private let source: SQLiteStore
    private let destination: PostgresStore
    /// Rows per chunk of the big tables, and per insert statement of the others.
    public let chunkSize: Int
    /// Tests: stop (throwing `Interrupted`) after this many chunks of this run have committed.
    public var stopAfterChunks: Int?
    /// Called after every committed chunk, and once per other table.
    public var progress: (Progress) -> Void = { _ in }

    private var chunksThisRun = 0
    private var rowsThisRun = 0
    private var started = Date()

    /// The advisory lock one copy into a store (a database's schema) holds for its whole run:
    /// "wdcp" and the schema's hash.
    static let lockSQL = "pg_try_advisory_lock(2003067760, hashtext(current_schema()))"
    static let finishedRow = "(finished)"

    /// - Parameters:
    ///   - source: the SQLite store of the data dir (opened, so migrated to the current schema).
    ///   - destination: the PostgreSQL store to fill (opened, so migrated).
    ///   - chunkSize: rows per chunk (and per transaction) of the big tables.
    public init(source: SQLiteStore, destination: PostgresStore, chunkSize: Int = 5_000) {
        self.source = source
        self.destination = destination
        self.chunkSize = max(1, chunkSize)
    }

    /// Copies (or continues copying) everything, then counts both sides.
    /// - Throws: `Failure` when the destination holds other data or another copy runs into it;
    ///   `Interrupted` after `stopAfterChunks`; database errors as they come (run it again).
    public func run() throws -> Summary {
        started = Date()
        chunksThisRun = 0
        rowsThisRun = 0
        return try destination.pool.withConnection { connection in
            let locked = try connection.query("SELECT \(Self.lockSQL)").first?.bool(0) ?? false
            guard locked else { throw Failure("another watchdogd store copy is writing into \(destination.displayURL)") }
            defer { _ = try? connection.query("SELECT pg_advisory_unlock(2003067760, hashtext(current_schema()))") }
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS store_copy_progress (
                    source_table text PRIMARY KEY,
                    last_rowid bigint NOT NULL,
                    rows bigint NOT NULL,
                    updated_at timestamptz NOT NULL DEFAULT now()
                )
                """)
            let resumed = try preflight(connection)
            try preparePartitions(connection)
            for table in Self.chunkedTables { try copyChunked(table, connection) }
            try connection.transaction { try copyTheRest(connection) }
            let counts = try verify(connection)
            return Summary(counts: counts, rowsCopied: rowsThisRun, seconds: Date().timeIntervalSince(started), resumed: resumed)
        }
    }

    // MARK: Refusing other data

    /// Tables a fresh copy needs empty (everything the store writes).
    static let destinationTables = [
        "apps", "credentials", "dashboard_sessions", "login_links", "config_documents", "config_changes", "test_crash_daily",
        "alert_hooks", "alert_rules", "alert_firings", "alert_deliveries", "client_drops", "sessions", "report_keys", "reports",
        "releases", "release_kinds", "release_breakdown", "release_hourly", "release_idiom_sessions", "release_affected",
        "release_installs", "release_install_kinds", "release_hourly_sessions", "issue_releases", "keyboard_heights",
        "session_issue_marks", "session_affected_marks", "session_value_marks",
        "install_origins", "ingest_hourly_counts", "release_networks", "release_admissions", "app_admission", "rollouts",
        "attest_challenges", "attested_keys", "app_attestation", "audit_log", "alert_digests", "issue_triage",
        "approval_settings", "proposals",
    ]

    /// `true` when continuing an unfinished copy; throws when the destination has anything else.
    private func preflight(_ connection: PostgresConnection) throws -> Bool {
        var progress: [String: (last: Int64, rows: Int64)] = [:]
        for row in try connection.query("SELECT source_table, last_rowid, rows FROM store_copy_progress") {
            progress[row.text(0)] = (row.integer(1), row.integer(2))
        }
        if progress[Self.finishedRow] != nil {
            throw Failure("\(destination.displayURL) already holds a finished copy (store_copy_progress); it may be in use as a store by now, so nothing is copied again")
        }
        if progress.isEmpty {
            var holding: [String] = []
            for table in Self.destinationTables where try connection.query("SELECT EXISTS (SELECT 1 FROM \(table))").first?.bool(0) ?? false {
                holding.append(table)
            }
            guard holding.isEmpty else {
                throw Failure("\(destination.displayURL) already holds data (\(holding.joined(separator: ", "))) and no unfinished copy; copy into an empty database")
            }
            return false
        }
        // An unfinished copy: only what its chunks committed may be there (the rest is written
        // by the final transaction, which also marks the copy finished).
        let sourceApps = Set(try source.pool.read { db in try String.fetchAll(db, sql: "SELECT id FROM apps") })
        let strangers = try connection.query("SELECT id FROM apps").map { $0.text(0) }.filter { !sourceApps.contains($0) }
        guard strangers.isEmpty else {
            throw Failure("\(destination.displayURL) has apps that are not in the source (\(strangers.joined(separator: ", "))); refusing to mix two stores")
        }
        let reports = progress["reports"] ?? (0, 0)
        let sessions = progress["sessions"] ?? (0, 0)
        let found = try connection.query("""
            SELECT (SELECT count(*) FROM reports), (SELECT count(*) FROM report_keys), (SELECT count(*) FROM reports WHERE sequence > $1),
                   (SELECT count(*) FROM sessions)
            """, [reports.last])
        guard let row = found.first, row.integer(0) == reports.rows, row.integer(1) == reports.rows, row.integer(2) == 0, row.integer(3) == sessions.rows else {
            throw Failure("\(destination.displayURL) has reports or sessions an unfinished copy did not write (was a watchdogd serve started on it?); refusing to continue")
        }
        return true
    }

    /// A partition for every UTC day of the source's reports, and `report_sequence` past every
    /// rowid at once, so nothing written meanwhile could take a copied report's sequence.
    private func preparePartitions(_ connection: PostgresConnection) throws {
        let days = try source.pool.read { db in
            try Int64.fetchAll(db, sql: "SELECT DISTINCT received_at / 86400000 FROM reports WHERE received_at >= 0")
        }
        for day in days.sorted() { try destination.ensurePartitions(days: day...day) }
        let maximum = try source.pool.read { db in try Int64.fetchOne(db, sql: "SELECT coalesce(max(rowid), 0) FROM reports") } ?? 0
        try setSequence(minimum: maximum, connection)
    }

    private func setSequence(minimum: Int64, _ connection: PostgresConnection) throws {
        try connection.query("""
            SELECT setval('report_sequence', GREATEST($1::bigint, (SELECT coalesce(max(sequence), 0) FROM reports),
                                                      (SELECT last_value FROM report_sequence), 1))
            """, [minimum])
    }

    // MARK: Tables

    /// How a source value becomes a destination one.
    enum Conversion {
        case text, integer, bool, bytes, double
        /// A `CompactID`: 16 bytes → lowercase canonical UUID text.
        case id
        /// A `StoredBody`: BLOB as it is, TEXT compressed.
        case body
        /// A session mark's fingerprint: an integer → `fp_` + 16 lowercase hex digits.
        case fingerprint
        /// A session value mark's dimension: 0 kind, 1 screen, 2 keyboard_mode.
        case dimension

        var sqlType: String {
            switch self {
            case .text, .id, .fingerprint, .dimension: "text"
            case .integer: "bigint"
            case .bool: "boolean"
            case .bytes, .body: "bytea"
            case .double: "double precision"
            }
        }
    }

    struct Table {
        /// The source table (and the name counted and shown).
        var name: String
        /// Destination columns and how each is converted; the source SELECT yields them in order.
        var columns: [(name: String, conversion: Conversion)]
        /// The source SELECT's column list and FROM (defaults to the same names from `name`).
        var select: String? = nil
        /// Destination table, when not `name`.
        var target: String? = nil

        var sourceSQL: String { select ?? "SELECT \(columns.map(\.name).joined(separator: ", ")) FROM \(name)" }
        var targetTable: String { target ?? name }
    }

    static func columns(_ spec: String) -> [(name: String, conversion: Conversion)] {
        spec.split(separator: ",").map { item in
            let parts = item.split(separator: ":").map { $0.trimmingCharacters(in: .whitespaces) }
            let conversion: Conversion = switch parts.count > 1 ? parts[1] : "t" {
            case "i": .integer
            case "b": .bool
            case "x": .bytes
            case "d": .double
            case "id": .id
            case "body": .body
            case "fp": .fingerprint
            case "dim": .dimension
            default: .text
            }
            return (parts[0], conversion)
        }
    }

    /// Copied in chunks by rowid; the source SELECT's first column is the rowid.
    static let chunkedTables: [Table] = [
        Table(name: "reports", columns: columns("""
            sequence:i, id:id, app, version, build, channel, kind, occurred_at:i, received_at:i, suspect:b, screen, fingerprint:fp, body:body, flooded:b,
            unknown_session:b
            """), select: """
            SELECT rowid, rowid, id, (SELECT value FROM mark_values WHERE number = reports.app),
                   (SELECT version FROM release_refs WHERE ref = reports.release), (SELECT build FROM release_refs WHERE ref = reports.release),
                   (SELECT value FROM mark_values WHERE number = reports.channel), (SELECT value FROM mark_values WHERE number = reports.kind),
                   occurred_at, received_at, suspect, (SELECT value FROM mark_values WHERE number = reports.screen), fingerprint, body, flooded,
                   unknown_session FROM reports
            """),
        Table(name: "sessions", columns: columns("""
            id:id, app, version, build, channel, install_id, idiom, started_at:i, received_at:i, body:body, network, implausible:i, attested:b
            """), select: "SELECT rowid, id, app, version, build, channel, install_id, idiom, started_at, received_at, body, network, implausible, attested FROM sessions"),
    ]

    /// Copied in the final transaction, in this order (deleted in the reverse one: foreign keys).
    static let otherTables: [Table] = [
        Table(name: "apps", columns: columns("id, created_at:i")),
        Table(name: "credentials", columns: columns("id, role, app, name, secret_hash:x, created_at:i, revoked_at:i, apps")),
        Table(name: "dashboard_sessions", columns: columns("id_hash:x, credential_id, csrf_token, created_at:i, expires_at:i")),
        Table(name: "login_links", columns: columns("code_hash:x, credential_id, expires_at:i")),
        Table(name: "config_documents", columns: columns("app, version:i, document, updated_at:i, updated_by")),
        Table(name: "config_changes", columns: columns("app, version:i, changed_at:i, changed_by, before, after, note")),
        Table(name: "rollouts", columns: columns("app, rule_id, revision:i, status, document, updated_at:i")),
        Table(name: "audit_log", columns: columns("id:i, at:i, actor, address, action, app, before, after")),
        Table(name: "approval_settings", columns: columns("app, require")),
        Table(name: "proposals", columns: columns("""
            id, app, kinds, action, proposer, created_at:i, expires_at:i, method, path, query, body, if_match, impact, status, decided_by, decided_at:i, outcome
            """)),
        Table(name: "issue_triage", columns: columns("""
            app, fingerprint, resolution, resolved_version, resolved_build, next_release:b, resolved_at:i, mute_until:i, mute_sessions:i,
            mute_baseline:i, note, changed_by, changed_at:i
            """)),
        Table(name: "test_crash_daily", columns: columns("app, install_id, day:i, crashes:i")),
        Table(name: "alert_hooks", columns: columns("id, app, name, url, secret, created_at:i, created_by, kind, recipients, digest:b")),
        Table(name: "alert_digests", columns: columns("hook_id, week")),
        Table(name: "alert_rules", columns: columns("""
            id, app, name, condition, kind, minimum_sessions:i, minimum_affected_sessions:i, threshold:d, hook_id, created_at:i, created_by,
            minimum_installs:i, installs
            """)),
        Table(name: "alert_firings", columns: columns("rule_id, subject, release_version, release_build, alert_id, fired_at:i")),
        Table(name: "alert_deliveries", columns: columns("""
            id:i, alert_id, hook_id, app, rule_id, event, body, created_at:i, state, attempts:i, next_attempt_at:i, last_attempt_at:i,
            last_status:i, last_latency_ms:i, last_error, delivered_at:i
            """)),
        Table(name: "client_drops", columns: columns("id, app, version, build, evicted:i, quarantined:i, received_at:i")),
        Table(name: "releases", columns: columns("""
            app, version, build, sessions:i, affected_sessions:i, auto_fixed:i, test_crashes:i, first_seen:i, last_seen:i, partial_history:b,
            implausible_sessions:i, unknown_session_reports:i, last_received:i, bulk_start_hour:i
            """)),
        Table(name: "install_origins", columns: columns("app, install_id, network, first_received_at:i, implausible:b, last_received_at:i")),
        Table(name: "ingest_hourly_counts", columns: columns("app, scope:i, key, hour:i, count:i")),
        Table(name: "release_networks", columns: columns("app, version, build, network, sessions:i")),
        Table(name: "release_admissions", columns: columns("app, version, build, state, admitted_by, admitted_at:i, reason")),
        Table(name: "app_admission", columns: columns("app, settings")),
        Table(name: "attest_challenges", columns: columns("app, hash:x, network, address, expires_at:i")),
        Table(name: "attested_keys", columns: columns("app, key_id:x, install_id, public_key:x, counter:i, environment, attested_at:i, owner:b")),
        Table(name: "app_attestation", columns: columns("app, settings")),
        Table(name: "release_kinds", columns: columns("app, version, build, kind, reports:i, suspect_reports:i, flooded_reports:i")),
        Table(name: "release_breakdown", columns: columns("app, version, build, dimension, value, kind, reports:i, suspect_reports:i, flooded_reports:i")),
        Table(name: "release_hourly", columns: columns("app, version, build, kind, hour:i, reports:i, suspect_reports:i, flooded_reports:i, affected_sessions:i")),
        Table(name: "release_idiom_sessions", columns: columns("app, version, build, idiom, sessions:i")),
        Table(name: "release_affected", columns: columns("app, version, build, dimension, value, affected_sessions:i")),
        Table(name: "release_installs", columns: columns("""
            app, version, build, install_id, channel, idiom, sessions:i, reports:i, affected_sessions:i, network, attested_sessions:i, attested_affected_sessions:i
            """)),
        Table(name: "release_install_kinds", columns: columns("app, version, build, install_id, kind, reports:i, affected_sessions:i, attested_affected_sessions:i")),
        Table(name: "release_hourly_sessions", columns: columns("app, version, build, hour:i, sessions:i, affected_sessions:i, attested_sessions:i")),
        Table(name: "issue_releases", columns: columns("""
            app, version, build, fingerprint, kind, screen, view_name, keyboard_mode, reports:i, suspect_reports:i, flooded_reports:i,
            affected_sessions:i, first_seen:i, last_seen:i
            """)),
        Table(name: "keyboard_heights", columns: columns("app, version, build, model, mode, input_mode, height:i, reports:i, window_sized:i")),
        Table(name: "session_issue_marks", columns: columns("app, version, build, fingerprint:fp, session:id, reports:i"),
              select: "SELECT r.app, r.version, r.build, m.fingerprint, m.session, m.reports FROM session_issue_marks m JOIN release_refs r ON r.ref = m.release"),
        Table(name: "session_affected_marks", columns: columns("app, version, build, session:id"),
              select: "SELECT r.app, r.version, r.build, m.session FROM session_affected_marks m JOIN release_refs r ON r.ref = m.release"),
        Table(name: "session_value_marks", columns: columns("app, version, build, dimension:dim, value, session:id"),
              select: """
                SELECT r.app, r.version, r.build, m.dimension, v.value, m.session
                FROM session_value_marks m JOIN release_refs r ON r.ref = m.release JOIN mark_values v ON v.number = m.value
                """),
    ]

    // MARK: Copying

    private func copyChunked(_ table: Table, _ connection: PostgresConnection) throws {
        let progressRow = try connection.query("SELECT last_rowid, rows FROM store_copy_progress WHERE source_table = $1", [table.name]).first
        var last = progressRow?.integer(0) ?? 0
        var copied = progressRow?.int(1) ?? 0
        let total = try source.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table.name)") } ?? 0
        let insert = insertSQL(table)
        progress(Progress(table: table.name, copied: copied, total: total, rowsPerSecond: rate()))
        while true {
            let rows = try source.pool.read { db in
                try Row.fetchAll(db, sql: "\(table.sourceSQL) WHERE rowid > ? ORDER BY rowid LIMIT ?", arguments: [last, chunkSize])
            }
            guard let lastRow = rows.last else { break }
            let arrays = try table.columns.enumerated().map { index, column in
                try Self.array(rows.map { $0[index + 1] as DatabaseValue }, column.conversion)
            }
            let chunkLast: Int64 = lastRow[0]
            try connection.transaction {
                if table.name == "reports" {
                    // The exactly-once guard of every copied report; a conflict is a report
                    // stored twice, which must not happen: the chunk fails.
                    let keys = try connection.query("""
                        INSERT INTO report_keys (app, id, received_at) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
                        """, [arrays[2], arrays[1], arrays[8]])
                    guard keys.affected == rows.count else { throw Failure("report_keys took \(keys.affected) of \(rows.count) rows") }
                }
                try connection.query(insert, arrays)
                try connection.query("""
                    INSERT INTO store_copy_progress (source_table, last_rowid, rows) VALUES ($1, $2, $3)
                    ON CONFLICT (source_table) DO UPDATE SET last_rowid = excluded.last_rowid, rows = excluded.rows, updated_at = now()
                    """, [table.name, chunkLast, Int64(copied + rows.count)])
            }
            last = chunkLast
            copied += rows.count
            rowsThisRun += rows.count
            chunksThisRun += 1
            progress(Progress(table: table.name, copied: copied, total: total, rowsPerSecond: rate()))
            if let stop = stopAfterChunks, chunksThisRun >= stop { throw Interrupted() }
        }
    }

    /// Everything but the chunked tables, replacing what an earlier attempt left; then the
    /// sequences and the finished mark. One transaction: all or nothing.
    private func copyTheRest(_ connection: PostgresConnection) throws {
        for table in Self.otherTables.reversed() { try connection.execute("DELETE FROM \(table.targetTable)") }
        for table in Self.otherTables {
            let insert = insertSQL(table)
            var copied = 0
            var pending: [[DatabaseValue]] = []
            func flush() throws {
                guard !pending.isEmpty else { return }
                let arrays = try table.columns.indices.map { index in try Self.array(pending.map { $0[index] }, table.columns[index].conversion) }
                try connection.query(insert, arrays)
                copied += pending.count
                rowsThisRun += pending.count
                pending.removeAll(keepingCapacity: true)
            }
            try source.pool.read { db in
                let cursor = try Row.fetchCursor(db, sql: table.sourceSQL)
                while let row = try cursor.next() {
                    pending.append((0..<table.columns.count).map { row[$0] as DatabaseValue })
                    if pending.count >= chunkSize { try flush() }
                }
                try flush()
            }
            progress(Progress(table: table.name, copied: copied, total: copied, rowsPerSecond: rate()))
        }
        try connection.execute("""
            SELECT setval(pg_get_serial_sequence('alert_deliveries', 'id'), GREATEST((SELECT coalesce(max(id), 0) FROM alert_deliveries), 1));
            SELECT setval(pg_get_serial_sequence('audit_log', 'id'), GREATEST((SELECT coalesce(max(id), 0) FROM audit_log), 1))
            """)
        let maximum = try source.pool.read { db in try Int64.fetchOne(db, sql: "SELECT coalesce(max(rowid), 0) FROM reports") } ?? 0
        try setSequence(minimum: maximum, connection)
        try connection.query("INSERT INTO store_copy_progress (source_table, last_rowid, rows) VALUES ($1, $2, 0)", [Self.finishedRow, maximum])
    }

    private func insertSQL(_ table: Table) -> String {
        let names = table.columns.map(\.name).joined(separator: ", ")
        let arrays = table.columns.enumerated().map { "$\($0.offset + 1)::\($0.element.conversion.sqlType)[]" }.joined(separator: ", ")
        return "INSERT INTO \(table.targetTable) (\(names)) SELECT * FROM unnest(\(arrays))"
    }

    private func rate() -> Double {
        let seconds = Date().timeIntervalSince(started)
        return seconds > 0 ? Double(rowsThisRun) / seconds : 0
    }

    /// One column of rows as an array parameter.
    static func array(_ values: [DatabaseValue], _ conversion: Conversion) throws -> PostgresValue {
        switch conversion {
        case .integer:
            return PostgresArray.integer(values.map { value in
                switch value.storage {
                case .int64(let number): number
                case .double(let number): Int64(number)
                case .string(let text): Int64(text)
                default: nil
                }
            })
        case .bool:
            return PostgresArray.bool(values.map { value in
                switch value.storage {
                case .int64(let number): number != 0
                case .double(let number): number != 0
                default: false
                }
            })
        case .bytes:
            return PostgresArray.bytes(values.map { value in
                switch value.storage {
                case .blob(let data): Array(data)
                case .string(let text): Array(text.utf8)
                default: []
                }
            })
        case .body:
            return PostgresArray.bytes(values.map { value in
                switch value.storage {
                case .blob(let data): Array(data)
                case .string(let text): StoredBody.compress(text)
                default: StoredBody.compress("")
                }
            })
        case .double:
            return PostgresArray.text(values.map { value in
                switch value.storage {
                case .double(let number): String(number)
                case .int64(let number): String(number)
                case .string(let text): text
                default: nil
                }
            })
        case .id:
            return PostgresArray.text(values.map { $0.isNull ? nil : CompactID.text(from: $0) })
        case .text:
            return PostgresArray.text(values.map { value in
                switch value.storage {
                case .string(let text): text
                case .int64(let number): String(number)
                case .double(let number): String(number)
                case .blob(let data): String(decoding: data, as: UTF8.self)
                case .null: nil
                }
            })
        case .fingerprint:
            return PostgresArray.text(values.map { value in
                switch value.storage {
                case .int64, .string: CompactFingerprint.text(from: value)
                default: nil
                }
            })
        case .dimension:
            return PostgresArray.text(try values.map { value in
                switch value.storage {
                case .int64(0): return "kind"
                case .int64(1): return "screen"
                case .int64(2): return "keyboard_mode"
                case .string(let text): return text
                default: throw Failure("a session_value_marks row has dimension \(value), not 0, 1 or 2")
                }
            })
        }
    }

    // MARK: Checking

    /// Rows per table on both sides, reports per release, and the release roll-ups against
    /// the copied reports.
    private func verify(_ connection: PostgresConnection) throws -> [Count] {
        var counts: [Count] = []
        for table in Self.chunkedTables + Self.otherTables {
            let sourceCount = try source.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table.name)") } ?? 0
            let destinationCount = try connection.query("SELECT count(*) FROM \(table.targetTable)").first?.int(0) ?? -1
            counts.append(Count(name: table.name, source: sourceCount, destination: destinationCount))
            if table.name == "reports" {
                let keys = try connection.query("SELECT count(*) FROM report_keys").first?.int(0) ?? -1
                counts.append(Count(name: "report_keys", source: sourceCount, destination: keys))
                // Each report's sequence is its rowid (the order of pages and exports): the sums
                // differ when a row got another's.
                let rowids = try source.pool.read { db in try Int.fetchOne(db, sql: "SELECT coalesce(sum(rowid), 0) FROM reports") } ?? 0
                let sequences = try connection.query("SELECT coalesce(sum(sequence), 0) FROM reports").first?.int(0) ?? -1
                counts.append(Count(name: "reports: sum of rowid / sequence", source: rowids, destination: sequences))
            }
        }
        struct Release: Hashable, Comparable {
            var app: String, version: String, build: String
            static func < (a: Self, b: Self) -> Bool { (a.app, a.version, a.build) < (b.app, b.version, b.build) }
            var text: String { "\(app) \(version) (\(build))" }
        }
        func sourceMap(_ sql: String) throws -> [Release: Int] {
            try source.pool.read { db in
                var map: [Release: Int] = [:]
                for row in try Row.fetchAll(db, sql: sql) { map[Release(app: row[0], version: row[1], build: row[2])] = row[3] }
                return map
            }
        }
        func destinationMap(_ sql: String) throws -> [Release: Int] {
            var map: [Release: Int] = [:]
            for row in try connection.query(sql) { map[Release(app: row.text(0), version: row.text(1), build: row.text(2))] = row.int(3) }
            return map
        }
        let perRelease = "SELECT app, version, build, count(*) FROM reports GROUP BY app, version, build"
        let perReleaseInSQLite = """
            SELECT r.app, r.version, r.build, n FROM (SELECT release, count(*) AS n FROM reports GROUP BY release) JOIN release_refs r ON r.ref = release
            """
        let rolledUp = "SELECT app, version, build, sum(reports + suspect_reports + flooded_reports) FROM release_kinds GROUP BY app, version, build"
        let sourceReports = try sourceMap(perReleaseInSQLite), destinationReports = try destinationMap(perRelease)
        var perApp: [String: (source: Int, destination: Int)] = [:]
        for (release, count) in sourceReports { perApp[release.app, default: (0, 0)].source += count }
        for (release, count) in destinationReports { perApp[release.app, default: (0, 0)].destination += count }
        for (app, count) in perApp.sorted(by: { $0.key < $1.key }) {
            counts.append(Count(name: "reports of \(app)", source: count.source, destination: count.destination))
        }
        for release in Set(sourceReports.keys).union(destinationReports.keys).sorted() {
            counts.append(Count(name: "reports of \(release.text)", source: sourceReports[release] ?? 0, destination: destinationReports[release] ?? 0))
        }
        // Each release's roll-up counts every report it has copied, where the source's did
        // (retention may have deleted raw rows whose counts the roll-ups keep).
        let sourceRolled = try sourceMap(rolledUp), destinationRolled = try destinationMap(rolledUp)
        for release in Set(sourceRolled.keys).union(destinationRolled.keys).sorted() {
            let whole = (sourceRolled[release] ?? 0) == (sourceReports[release] ?? 0)
            let copied = destinationReports[release] ?? 0
            let rolled = destinationRolled[release] ?? 0
            counts.append(Count(name: "roll-up reports of \(release.text)", source: whole ? copied : sourceRolled[release] ?? 0, destination: rolled))
        }
        return counts
    }
}
