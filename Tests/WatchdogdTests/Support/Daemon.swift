import Foundation
import GRDB
import PostgresClient
import Testing
import WatchdogTesting
#if canImport(Glibc)
import Glibc
#endif

/// The real `watchdogd` binary, serving on port 0 with its own temporary data dir.
final class Daemon {
    let dataDir: URL
    private(set) var process: Process
    private(set) var port: UInt16 = 0
    /// `export NAME=value` lines printed by `--demo`.
    private(set) var exports: [String: String] = [:]
    /// The one-time sign-in link `--demo` printed (path and query).
    private(set) var signInLink: String?
    private var output = PipeReader()
    private let ownsDataDir: Bool
    private var schemaURL: String?

    var client: HTTPClient { HTTPClient(port: port) }

    /// Starts a daemon; `dataDir` reuses another's directory (for restarts); with `startServing`
    /// false only the directory is set up (call `restart()` to serve).
    /// `environment`: added to the daemon's (e.g. `WatchdogServer.testAttestationRootVariable`).
    init(demo: Bool = false, dataDir: URL? = nil, extraArguments: [String] = [], environment: [String: String] = [:], startServing: Bool = true) throws {
        self.environment = environment
        if let dataDir {
            self.dataDir = dataDir
            ownsDataDir = false
        } else {
            self.dataDir = FileManager.default.temporaryDirectory.appendingPathComponent("watchdogd-test-\(UUID().uuidString)")
            ownsDataDir = true
        }
        process = Process()
        if startServing { try start(demo: demo, extraArguments: extraArguments) }
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            try? ChildProcess.waitForExit(process, seconds: Self.exitSeconds, command: "watchdogd serve")
        }
        if ownsDataDir { try? FileManager.default.removeItem(at: dataDir) }
    }

    static var binary: URL {
        let candidates = [
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("watchdogd"),
            Bundle.main.bundleURL.appendingPathComponent("watchdogd"),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("watchdogd"),
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent(".build/debug/watchdogd"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[3]
    }

    private var extraArguments: [String] = []
    private let environment: [String: String]

    /// How long `watchdogd serve` may take to print its address, and to exit after a signal.
    static let startSeconds = 60.0
    static let exitSeconds = 30.0
    /// How long an administrative verb (`apps add`, `backup`, `check`…) may run.
    static let commandSeconds = 60.0

    private func start(demo: Bool, extraArguments: [String], port: UInt16 = 0) throws {
        if !extraArguments.isEmpty { self.extraArguments = extraArguments }
        let extraArguments = self.extraArguments
        process = Process()
        output = PipeReader()
        self.port = 0
        process.executableURL = Self.binary
        // Tests post from one address far faster than devices do: rate limits are off unless a
        // test sets them.
        let limits = extraArguments.contains { $0.hasPrefix("--rate-per") } ? [] : ["--rate-per-address", "0", "--rate-per-key", "0"]
        process.arguments = ["serve", "--listen", "127.0.0.1:\(port)", "--data-dir", dataDir.path, "--log-level", "warning"]
            + (demo ? ["--demo"] : []) + limits + (try storeArguments()) + extraArguments
        process.standardOutput = output.pipe
        process.standardError = FileHandle.standardError
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        try process.run()
        output.start()
        var text = ""
        let deadline = Date().addingTimeInterval(Self.startSeconds)
        while process.isRunning, Date() < deadline {
            // Whole lines only: a read may end inside "listening on http://127.0.0.1:39953".
            let read = output.text
            text = read.lastIndex(of: "\n").map { String(read[...$0]) } ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }),
               let portText = line.split(separator: ":").last, let port = UInt16(portText),
               !demo || text.contains("WATCHDOG_ADMIN_TOKEN=") {
                self.port = port
                break
            }
            usleep(5_000)
        }
        if self.port == 0, process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            try? ChildProcess.waitForExit(process, seconds: 10, command: "watchdogd serve")
            throw ProcessTimedOut(command: "watchdogd serve", waitingFor: "print 'listening on'", seconds: Self.startSeconds, output: text)
        }
        if self.port == 0 {
            output.waitForEOF(seconds: 2)
            text = output.text
        }
        if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("dashboard: ") }),
           let url = line.split(separator: " ").dropFirst().first, let range = url.range(of: "/login?") {
            signInLink = String(url[range.lowerBound...])
        }
        for line in text.split(separator: "\n") where line.hasPrefix("export ") {
            let pair = line.dropFirst("export ".count).split(separator: "=", maxSplits: 1)
            if pair.count == 2 { exports[String(pair[0])] = String(pair[1]) }
        }
        guard self.port != 0 else { throw HTTPClientError(description: "watchdogd did not start: \(text)") }
    }

    /// Restarts on the same data dir (and, with `samePort`, the same port, so clients keep their URL).
    func restart(demo: Bool = false, samePort: Bool = false) throws {
        let previousPort = port
        stop()
        try start(demo: demo, extraArguments: [], port: samePort ? previousPort : 0)
    }

    /// SIGTERM, and the exit status. A daemon that has not exited `exitSeconds` later is
    /// killed and the test fails saying so.
    @discardableResult
    func stop() -> Int32 {
        guard port != 0 else { return 0 }
        guard process.isRunning else { return process.terminationStatus }
        process.terminate()
        return waitForExit(after: "SIGTERM")
    }

    /// SIGKILL: no chance to flush anything.
    func killHard() {
        kill(process.processIdentifier, SIGKILL)
        waitForExit(after: "SIGKILL")
    }

    /// Waits (bounded) for the daemon to exit after `signal` was sent; returns the exit status.
    @discardableResult
    func waitForExit(after signal: String) -> Int32 {
        do {
            try ChildProcess.waitForExit(process, seconds: Self.exitSeconds, command: "watchdogd serve (after \(signal))")
        } catch {
            Issue.record(error)
        }
        return process.terminationStatus
    }

    /// Runs another `watchdogd` verb on this data dir; returns (status, stdout). Throws
    /// `ProcessTimedOut` when it runs longer than `commandSeconds`.
    func runCommand(_ arguments: [String]) throws -> (status: Int32, stdout: String) {
        let result = try ChildProcess.run(Self.binary, arguments + ["--data-dir", dataDir.path] + (try storeArguments()), seconds: Self.commandSeconds)
        return (result.status, result.stdout)
    }

    /// Creates an app and returns its ingest key. `admission`: `open` unless a test is about
    /// admission (tests post whole fleets from 127.0.0.1 in one hour); `nil`: the defaults.
    func addApp(_ app: String, admission: String? = "open") throws -> String {
        let result = try runCommand(["apps", "add", app] + (admission.map { ["--admission", $0] } ?? []))
        guard result.status == 0 else { throw HTTPClientError(description: "apps add failed") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func addToken(role: String, name: String = "test") throws -> String {
        let result = try runCommand(["tokens", "add", "--role", role, name])
        guard result.status == 0 else { throw HTTPClientError(description: "tokens add failed") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `--store` for the store the tests run on (`WATCHDOG_TEST_STORE`): nothing for SQLite, the
    /// data dir's own PostgreSQL schema otherwise (so a restart finds the same data).
    func storeArguments() throws -> [String] {
        try postgresURL().map { ["--store", $0] } ?? []
    }

    /// The data dir's PostgreSQL schema URL (the schema created once), `nil` on SQLite.
    private func postgresURL() throws -> String? {
        if let known = schemaURL { return known }
        schemaURL = try TestStore.postgresURL(directory: dataDir)
        return schemaURL
    }

    /// Runs SQL that means the same on both stores, against the daemon's store; the rows as text.
    func sql(_ query: String) throws -> [[String?]] {
        if let url = try postgresURL() {
            return try PostgresConnection(url: url).query(query).rows
        }
        return try self.query { db in
            try Row.fetchAll(db, sql: query).map { row in row.databaseValues.map { value in value.isNull ? nil : String(describing: value.storage.value ?? "") } }
        }
    }

    /// The ids of the stored reports, once per stored row.
    func storedReportIDs() throws -> [String] {
        try sql(TestStore.isSQLite ? "SELECT id FROM report_ids" : "SELECT id FROM reports").map { $0[0] ?? "" }
    }

    /// Reads the SQLite file directly (WAL lets a reader in while the daemon writes).
    func query<T>(_ body: (Database) throws -> T) throws -> T {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: dataDir.appendingPathComponent("watchdog.sqlite3").path, configuration: configuration)
        return try queue.read(body)
    }

    func storedReportCount() throws -> Int {
        Int(try sql("SELECT count(*) FROM reports").first?.first??.description ?? "") ?? -1
    }
}
