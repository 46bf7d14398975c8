import Foundation
import Locking
import PostgresClient

/// The clustered store: PostgreSQL, shared by several stateless `watchdogd` nodes.
///
/// It keeps the SQLite store's guarantees across nodes: a batch is acknowledged only after
/// its transaction committed (`synchronous_commit` is the server's, `on` by default), a report
/// is stored once per (app, id) whichever node receives it (`report_keys`), and roll-ups are
/// upserts that add, written in a fixed key order so two nodes never wait on each other in a
/// cycle (a deadlock the server still reports is retried: the transaction was rolled back).
/// Reports are partitioned by UTC day of arrival so retention drops whole days.
public final class PostgresStore: Sendable {
    let pool: PostgresPool
    /// Keeps `pool`'s reachability fresh (`wd-pg-probe`).
    private let probe: PostgresProbe
    /// The URL without its password, for logs.
    public let displayURL: String
    /// Active reports of one fingerprint in one session past this many are counted apart as
    /// `flooded`; 0: no cap.
    public let floodCap: Int
    /// Days whose report partition is known to exist.
    let partitionDays = Locked<Set<Int64>>([])

    /// Connects (failing at once when the server cannot be reached), migrates, and creates the
    /// partitions of the next days.
    /// - Parameter connections: the most connections this node opens.
    public init(url: String, connections: Int = 8, floodCap: Int = SQLiteStore.defaultFloodCap) throws {
        self.floodCap = floodCap
        displayURL = Self.redacted(url)
        pool = try PostgresPool(url: url, capacity: connections)
        probe = PostgresProbe(pool: pool)
        try pool.withConnection { connection in try PostgresMigrations.migrate(connection) }
        let today = Self.day(Int64(Date().timeIntervalSince1970 * 1000))
        try ensurePartitions(days: today - 1...today + 2)
    }

    /// The migrations not yet applied (empty after `init`).
    public func pendingMigrations() throws -> [String] {
        try pool.withConnection { try PostgresMigrations.pending($0) }
    }

    /// UTC days since the epoch of a time in milliseconds (rounding down before 1970 too).
    static func day(_ milliseconds: Int64) -> Int64 {
        milliseconds >= 0 ? milliseconds / 86_400_000 : (milliseconds - 86_399_999) / 86_400_000
    }

    static func partitionName(day: Int64) -> String { "reports_d\(day)" }

    /// Creates the day partitions of `days` that do not exist yet. Concurrent nodes may race:
    /// the advisory lock makes one create and the others find it.
    func ensurePartitions(days: ClosedRange<Int64>) throws {
        let missing = partitionDays.withLock { known in days.filter { !known.contains($0) } }
        guard !missing.isEmpty else { return }
        try pool.withConnection { connection in
            try connection.transaction {
                try connection.query("SELECT pg_advisory_xact_lock($1)", [PostgresMigrations.lockKey + 1])
                for day in missing {
                    let name = Self.partitionName(day: day)
                    let exists = try connection.query("SELECT to_regclass($1) IS NOT NULL", [name]).first?.bool(0) ?? false
                    guard !exists else { continue }
                    // Rows of that day already in the default partition (a clock far ahead)
                    // move into the new one.
                    let start = day * 86_400_000, end = (day + 1) * 86_400_000
                    try connection.execute("""
                        CREATE TABLE \(name) (LIKE reports INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
                        WITH moved AS (DELETE FROM reports_default WHERE received_at >= \(start) AND received_at < \(end) RETURNING *)
                        INSERT INTO \(name) SELECT * FROM moved;
                        ALTER TABLE reports ATTACH PARTITION \(name) FOR VALUES FROM (\(start)) TO (\(end));
                        """)
                }
            }
        }
        partitionDays.withLock { $0.formUnion(missing) }
    }

    /// The reports partitions by day, oldest first.
    public func partitions() throws -> [Int64] {
        try pool.withConnection(Self.partitionDays)
    }

    /// The days of the reports partitions, oldest first, read on `connection`.
    static func partitionDays(_ connection: PostgresConnection) throws -> [Int64] {
        try connection.query("""
            SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'reports'::regclass AND c.relname LIKE 'reports\\_d%'
            """).compactMap { Int64($0.text(0).dropFirst("reports_d".count)) }.sorted()
    }

    public func checkWritable() throws {
        try pool.withConnection { connection in
            let readOnly = try connection.query("SELECT current_setting('transaction_read_only') = 'on' OR pg_is_in_recovery()").first?.bool(0) ?? true
            if readOnly { throw PostgresError(sqlState: "25006", message: "the database is read-only (a standby, or default_transaction_read_only)") }
        }
    }

    public func close() throws {
        probe.stop()
        pool.close()
    }

    /// `postgres://user:secret@host/db` → `postgres://user:…@host/db`.
    public static func redacted(_ url: String) -> String {
        guard let at = url.firstIndex(of: "@"), let scheme = url.range(of: "://"), scheme.upperBound < at,
              let colon = url[scheme.upperBound..<at].firstIndex(of: ":") else { return url }
        return String(url[..<url.index(after: colon)]) + "…" + String(url[at...])
    }
}

extension PostgresStore {
    /// Creates `schema` in the database at `url` if it is missing, and returns a URL whose
    /// connections use it (`search_path`): several independent stores in one database, e.g.
    /// one per test.
    public static func url(_ url: String, schema: String) throws -> String {
        guard schema.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }), !schema.isEmpty else {
            throw PostgresError(sqlState: "42602", message: "a schema name here is letters, digits and _ only: \(schema)")
        }
        let connection = try PostgresConnection(url: url)
        try connection.execute("CREATE SCHEMA IF NOT EXISTS \(schema)")
        return url + (url.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
    }
}

extension PostgresStore: TelemetryStore {}
