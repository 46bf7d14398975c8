import Foundation
import GRDB
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
    private var stdoutPipe = Pipe()
    private let ownsDataDir: Bool

    var client: HTTPClient { HTTPClient(port: port) }

    /// Starts a daemon; `dataDir` reuses another's directory (for restarts); with `startServing`
    /// false only the directory is set up (call `restart()` to serve).
    init(demo: Bool = false, dataDir: URL? = nil, extraArguments: [String] = [], startServing: Bool = true) throws {
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
            process.waitUntilExit()
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

    private func start(demo: Bool, extraArguments: [String], port: UInt16 = 0) throws {
        if !extraArguments.isEmpty { self.extraArguments = extraArguments }
        let extraArguments = self.extraArguments
        process = Process()
        stdoutPipe = Pipe()
        self.port = 0
        process.executableURL = Self.binary
        // Tests post from one address far faster than devices do: rate limits are off unless a
        // test sets them.
        let limits = extraArguments.contains { $0.hasPrefix("--rate-per") } ? [] : ["--rate-per-address", "0", "--rate-per-key", "0"]
        process.arguments = ["serve", "--listen", "127.0.0.1:\(port)", "--data-dir", dataDir.path, "--log-level", "warning"]
            + (demo ? ["--demo"] : []) + limits + extraArguments
        process.standardOutput = stdoutPipe
        process.standardError = FileHandle.standardError
        try process.run()
        let handle = stdoutPipe.fileHandleForReading
        var text = ""
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }),
               let portText = line.split(separator: ":").last, let port = UInt16(portText) {
                self.port = port
                if !demo || text.contains("WATCHDOG_ADMIN_TOKEN=") { break }
            }
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

    /// SIGTERM, and the exit status.
    @discardableResult
    func stop() -> Int32 {
        guard port != 0 else { return 0 }
        guard process.isRunning else { return process.terminationStatus }
        process.terminate()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// SIGKILL: no chance to flush anything.
    func killHard() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Runs another `watchdogd` verb on this data dir; returns (status, stdout).
    func runCommand(_ arguments: [String]) throws -> (status: Int32, stdout: String) {
        let command = Process()
        command.executableURL = Self.binary
        command.arguments = arguments + ["--data-dir", dataDir.path]
        let output = Pipe()
        command.standardOutput = output
        command.standardError = Pipe()
        try command.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        command.waitUntilExit()
        return (command.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Creates an app and returns its ingest key.
    func addApp(_ app: String) throws -> String {
        let result = try runCommand(["apps", "add", app])
        guard result.status == 0 else { throw HTTPClientError(description: "apps add failed") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func addToken(role: String, name: String = "test") throws -> String {
        let result = try runCommand(["tokens", "add", "--role", role, name])
        guard result.status == 0 else { throw HTTPClientError(description: "tokens add failed") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Reads the SQLite file directly (WAL lets a reader in while the daemon writes).
    func query<T>(_ body: (Database) throws -> T) throws -> T {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: dataDir.appendingPathComponent("watchdog.sqlite3").path, configuration: configuration)
        return try queue.read(body)
    }

    func storedReportCount() throws -> Int {
        try query { try Int.fetchOne($0, sql: "SELECT count(*) FROM reports") ?? -1 }
    }
}
