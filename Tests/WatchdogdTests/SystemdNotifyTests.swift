import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `watchdogd serve` under systemd's notification protocol (deploy/watchdogd.service is
/// `Type=notify` with `WatchdogSec=`): a Unix datagram socket in the test plays systemd's part.
@Suite(.serialized) struct SystemdNotifyTests {
    @Test func readyComesOnlyOnceItListensSoTheFirstRequestAfterItSucceeds() throws {
        let socket = try NotifySocket(abstract: true)
        let serve = try NotifiedServe(socket: socket)
        let ready = try #require(socket.waitFor("READY=1", seconds: Daemon.startSeconds), "READY=1 arrives")
        // Whatever the daemon printed before it sent READY=1 is in the pipe by now.
        let output = serve.outputSoFar()
        let port = try #require(NotifiedServe.port(in: output), "'listening on' was printed before READY=1; stdout so far: \(output)")
        #expect(try HTTPClient(port: port).request("GET", "/readyz").status == 200, "the first request after READY=1")
        #expect(ready.contains("STATUS=listening on http://127.0.0.1:\(port)"))
    }

    @Test func watchdogPingsComeEveryHalfWatchdogSec() throws {
        let socket = try NotifySocket(abstract: false)
        let serve = try NotifiedServe(socket: socket, environment: ["WATCHDOG_USEC": "2000000"])
        try #require(socket.waitFor("READY=1", seconds: Daemon.startSeconds) != nil)
        let pings = socket.collect(seconds: 5).filter { $0 == "WATCHDOG=1" }.count
        // One a second; generous either way for a busy 2-core machine.
        #expect((2...15).contains(pings), "\(pings) pings in 5 s with WatchdogSec=2")
        withExtendedLifetime(serve) {}
    }

    @Test func noPingsWhenWatchdogPIDNamesAnotherProcess() throws {
        let socket = try NotifySocket(abstract: false)
        let serve = try NotifiedServe(socket: socket, environment: ["WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "1"])
        try #require(socket.waitFor("READY=1", seconds: Daemon.startSeconds) != nil)
        #expect(socket.collect(seconds: 2.5).filter { $0 == "WATCHDOG=1" }.isEmpty, "sd_watchdog_enabled(3): the pings are for process 1")
        withExtendedLifetime(serve) {}
    }

    /// The writer wedged for real: another connection holds SQLite's write lock while a report
    /// waits to be committed (the writer sits in SQLite's 10 s busy timeout).
    @Test(.enabled(if: TestStore.isSQLite, "stalls the writer with a SQLite lock"))
    func pingsStopWhileTheWriterIsStuckAndResumeOnceItIsFree() throws {
        let socket = try NotifySocket(abstract: false)
        let daemon = try Daemon(startServing: false)
        let key = try daemon.addApp("com.example.mail")
        let serve = try NotifiedServe(socket: socket, environment: ["WATCHDOG_USEC": "1000000"], dataDir: daemon.dataDir)
        try #require(socket.waitFor("READY=1", seconds: Daemon.startSeconds) != nil)
        let port = try #require(NotifiedServe.port(in: serve.outputSoFar()))
        try #require(socket.waitFor("WATCHDOG=1", seconds: 20) != nil, "pings while the writer is free")

        let lock = try SQLiteWriteLock(path: daemon.dataDir.appendingPathComponent("watchdog.sqlite3").path)
        defer { lock.release() }
        let posted = Locked<Int?>(nil), answered = DispatchSemaphore(value: 0)
        let body = Array(try JSONSerialization.data(withJSONObject: ["reports": [try Fixtures.freshReport()]]))
        Thread {
            let status = try? HTTPClient(port: port).request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: body).status
            posted.withLock { $0 = status }
            answered.signal()
        }.start()

        // A round that started before the writer took the report may still ping; then none.
        usleep(1_500_000)
        _ = socket.collect(seconds: 0.01)
        let whileStuck = socket.collect(seconds: 3).filter { $0 == "WATCHDOG=1" }.count
        #expect(whileStuck == 0, "\(whileStuck) pings while the writer waited for the lock")

        lock.release()
        #expect(socket.waitFor("WATCHDOG=1", seconds: 20) != nil, "pings again once the writer commits")
        #expect(answered.wait(timeout: .now() + 30) == .success)
        #expect(posted.withLock { $0 } == 202, "the waiting report is committed once the lock is released")
    }

    @Test func stoppingComesWhenSIGTERMStartsTheDrain() throws {
        let socket = try NotifySocket(abstract: false)
        let serve = try NotifiedServe(socket: socket, environment: ["WATCHDOG_USEC": "1000000"])
        try #require(socket.waitFor("READY=1", seconds: Daemon.startSeconds) != nil)
        kill(serve.process.processIdentifier, SIGTERM)
        #expect(socket.waitFor("STOPPING=1", seconds: Daemon.exitSeconds) != nil, "STOPPING=1 after SIGTERM")
        try ChildProcess.waitForExit(serve.process, seconds: Daemon.exitSeconds, command: "watchdogd serve (after SIGTERM)")
        #expect(serve.process.terminationStatus == 0)
    }
}

/// `watchdogd serve` started as systemd starts a `Type=notify` service: `$NOTIFY_SOCKET` (and
/// `$WATCHDOG_USEC`) in its environment; its stdout is read only when a test asks.
private final class NotifiedServe {
    let process = Process()
    private let stdout = Pipe()
    private let scratch: Daemon?

    init(socket: NotifySocket, environment: [String: String] = [:], dataDir: URL? = nil) throws {
        scratch = dataDir == nil ? try Daemon(startServing: false) : nil
        let dataDir = dataDir ?? scratch!.dataDir
        process.executableURL = Daemon.binary
        process.arguments = ["serve", "--listen", "127.0.0.1:0", "--data-dir", dataDir.path, "--log-level", "warning",
                             "--rate-per-address", "0", "--rate-per-key", "0"]
        var variables = ProcessInfo.processInfo.environment
        for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] { variables[name] = nil }
        variables["NOTIFY_SOCKET"] = socket.address
        variables.merge(environment) { $1 }
        process.environment = variables
        process.standardOutput = stdout
        process.standardError = FileHandle.standardError
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            try? ChildProcess.waitForExit(process, seconds: Daemon.exitSeconds, command: "watchdogd serve")
        }
    }

    /// What the daemon has written to stdout so far, without waiting for more.
    func outputSoFar() -> String {
        let descriptor = stdout.fileHandleForReading.fileDescriptor
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            guard count > 0 else { break }
            bytes += buffer.prefix(count)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The port of a `listening on http://127.0.0.1:PORT` line.
    static func port(in output: String) -> UInt16? {
        output.split(separator: "\n").first { $0.hasPrefix("listening on ") }.flatMap { $0.split(separator: ":").last }.flatMap { UInt16($0) }
    }
}
