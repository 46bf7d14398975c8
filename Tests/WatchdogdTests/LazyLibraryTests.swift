import Foundation
import Testing
import WatchdogTesting

/// libcurl (webhooks) and libpq (the PostgreSQL store) are loaded with dlopen when first needed,
/// not linked (docs/performance.md, memory): a daemon on SQLite without hooks maps neither, nor
/// the TLS, LDAP and Kerberos libraries they pull in.
@Suite struct LazyLibraryTests {
    /// The daemon's `/proc/PID/maps`, read to its end (`String(contentsOfFile:)` stops after the
    /// first read of a file that, like every /proc file, says it is empty).
    static func mapped(_ daemon: Daemon) throws -> String {
        let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(daemon.process.processIdentifier)/maps"))
        defer { try? file.close() }
        return String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
    }

    @Test func libcurlIsMappedOnlyOnceAHookSendsAndLibpqOnlyOnPostgreSQL() throws {
        let receiver = try WebhookReceiver()
        let daemon = try Daemon()
        let app = AlertDaemonTests.app
        _ = try daemon.addApp(app)
        let admin = try daemon.addToken(role: "admin")
        let onPostgres = !TestStore.isSQLite
        var maps = try Self.mapped(daemon)
        #expect(!maps.contains("libcurl.so"), "no hook has sent anything yet")
        #expect(maps.contains("libpq.so") == onPostgres)

        let hook = try AlertDaemonTests.addHook(daemon, app: app, url: receiver.url)
        #expect(try !Self.mapped(daemon).contains("libcurl.so"), "a hook that has not sent loads nothing")
        try AlertDaemonTests.sendTest(daemon, admin: admin, app: app, hook: hook)
        #expect(receiver.waitForRequests(1))
        #expect(try AlertDaemonTests.eventually { try AlertDaemonTests.delivery(daemon, hook: hook)?.state == "delivered" })
        maps = try Self.mapped(daemon)
        #expect(maps.contains("libcurl.so.4"), "the first delivery loaded libcurl")
        #expect(maps.contains("libpq.so") == onPostgres)
        #expect(daemon.stop() == 0)
    }
}
