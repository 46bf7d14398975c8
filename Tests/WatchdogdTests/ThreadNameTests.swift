import Foundation
import Testing
import WatchdogTesting

/// The daemon's own threads carry names the kernel shows (`top -H`, `ps -L`,
/// `/proc/PID/task/TID/comm`), so an operator can tell which one is busy: Foundation's
/// `Thread.name` never reached the kernel on Linux, and every thread read `watchdogd`.
@Suite struct ThreadNameTests {
    /// The kernel's name of each of the daemon's threads.
    static func threadNames(_ daemon: Daemon) throws -> [String] {
        let pid = daemon.process.processIdentifier
        return try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").compactMap { task in
            guard let file = FileHandle(forReadingAtPath: "/proc/\(pid)/task/\(task)/comm") else { return nil }  // a thread that just ended
            defer { try? file.close() }
            return String(decoding: (try? file.readToEnd()) ?? Data(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    @Test func theWriterAlertsRolloutsAndWebhookWorkersAreNamedInTheKernel() throws {
        let receiver = try WebhookReceiver()
        let daemon = try Daemon()
        let app = AlertDaemonTests.app
        _ = try daemon.addApp(app)
        let admin = try daemon.addToken(role: "admin")
        // A thread names itself as it starts running: wait for that, not just for its creation.
        let serving = ["wd-writer", "wd-alerts", "wd-rollouts", "wd-deliveries", "wd-retention"] + (TestStore.isSQLite ? [] : ["wd-pg-listen", "wd-pg-probe"])
        var started: [String] = []
        #expect(try AlertDaemonTests.eventually(10) { started = try Self.threadNames(daemon); return serving.allSatisfy(started.contains) }, "\(started)")
        #expect(!started.contains { $0.hasPrefix("wd-webhook-") }, "the webhook workers start with the first delivery: \(started)")

        let hook = try AlertDaemonTests.addHook(daemon, app: app, url: receiver.url)
        try AlertDaemonTests.sendTest(daemon, admin: admin, app: app, hook: hook)
        #expect(receiver.waitForRequests(1))
        let workers = Set((1...8).map { "wd-webhook-\($0)" })
        var delivering: [String] = []
        #expect(try AlertDaemonTests.eventually(10) { delivering = try Self.threadNames(daemon); return Set(delivering.filter { $0.hasPrefix("wd-webhook-") }) == workers },
                "\(delivering)")
        #expect(daemon.stop() == 0)
    }
}
