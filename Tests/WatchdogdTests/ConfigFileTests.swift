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
        let command = Process()
        command.executableURL = Daemon.binary
        command.arguments = ["serve", "--listen", "127.0.0.1:0", "--config", file.path, "--data-dir", FileManager.default.temporaryDirectory.appendingPathComponent("watchdogd-\(UUID().uuidString)").path]
        command.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let errors = Pipe()
        command.standardError = errors
        command.standardOutput = Pipe()
        try command.run()
        // If a regression let it start serving, stop it instead of waiting forever.
        let pid = command.processIdentifier
        let stopper = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 20, execute: stopper)
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        command.waitUntilExit()
        stopper.cancel()
        #expect(command.terminationStatus != 0)
        #expect(message.contains(expected), "\(message)")
    }
}
