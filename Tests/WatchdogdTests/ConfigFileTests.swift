import Foundation
import Testing

@Suite struct ConfigFileTests {
    private static func write(_ text: String) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("watchdogd-\(UUID().uuidString).env")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test(arguments: [
        ("WATCHDOG_LISTEN=127.0.0.1:0\nWATCHDOG_RETENTON_DAYS=30\n", [:], "line 2: unknown setting \"WATCHDOG_RETENTON_DAYS\""),
        ("WATCHDOG_RATE_PER_KEY=10\r\nWATCHDOG_RATE_PER_KEY=20\r\n", [:], "line 2: WATCHDOG_RATE_PER_KEY is already set on line 1"),
        ("listen 127.0.0.1:0\n", [:], "line 1: expected WATCHDOG_<NAME>=value"),
        ("WATCHDOG_RETENTION_DAYS=ninety\n", [:], "WATCHDOG_RETENTION_DAYS (config file"),
        ("WATCHDOG_COOKIE_SECURE=1  # behind nginx\n", [:], "WATCHDOG_COOKIE_SECURE (config file"),
        // The environment wins over the file: its bad value is the one refused.
        ("WATCHDOG_RETENTION_DAYS=30\n", ["WATCHDOG_RETENTION_DAYS": "ninety"], "WATCHDOG_RETENTION_DAYS must be a whole number"),
    ] as [(String, [String: String], String)])
    func aWrongSettingIsRefusedNamingWhereItCameFrom(text: String, environment: [String: String], expected: String) throws {
        let file = try Self.write(text)
        defer { try? FileManager.default.removeItem(at: file) }
        // A regression that let it start serving is killed and fails the test (ProcessTimedOut).
        let dataDir = FileManager.default.temporaryDirectory.appendingPathComponent("watchdogd-\(UUID().uuidString)")
        let result = try ChildProcess.run(Daemon.binary, ["serve", "--listen", "127.0.0.1:0", "--config", file.path, "--data-dir", dataDir.path],
                                          environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }, seconds: 20)
        let message = result.stderr
        #expect(result.status != 0)
        #expect(message.contains(expected), "\(message)")
    }
}
