import Foundation
import WatchdogStore

/// Which store the tests run on: SQLite in a temp dir (the default), or PostgreSQL when
/// `WATCHDOG_TEST_STORE=postgres` — then `WATCHDOG_TEST_POSTGRES_URL` names a database
/// (`deploy/cluster/postgres-start.sh` prints one) and each test gets a schema of its own.
public enum TestStore: Sendable {
    case sqlite
    case postgres(url: String)

    public static let current: TestStore = {
        let environment = ProcessInfo.processInfo.environment
        guard environment["WATCHDOG_TEST_STORE"] == "postgres" else { return .sqlite }
        return .postgres(url: environment["WATCHDOG_TEST_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:55432/watchdog")
    }()

    /// Tests that open or damage the SQLite file itself run only on SQLite.
    public static var isSQLite: Bool {
        if case .sqlite = current { return true }
        return false
    }

    /// Opens the store of a test's data dir on this kind of store: the SQLite file in it, or the
    /// PostgreSQL schema named after it (so a restart opens the same data).
    public func open(directory: URL, synchronous: SQLiteStore.Synchronous, floodCap: Int) throws -> any TelemetryStore {
        switch self {
        case .sqlite:
            return try SQLiteStore(directory: directory.path, synchronous: synchronous, floodCap: floodCap)
        case .postgres:
            return try PostgresStore(url: postgresURL(directory: directory)!, connections: 4, floodCap: floodCap)
        }
    }

    /// The URL of a test's PostgreSQL schema (created if missing); `nil` on SQLite.
    public static func postgresURL(directory: URL) throws -> String? {
        try current.postgresURL(directory: directory)
    }

    /// The URL of a test's PostgreSQL schema on this kind of store (created if missing); `nil` on SQLite.
    public func postgresURL(directory: URL) throws -> String? {
        guard case .postgres(let url) = self else { return nil }
        let schema = "t_" + directory.lastPathComponent.lowercased().map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined()
        return try PostgresStore.url(url, schema: schema)
    }
}
