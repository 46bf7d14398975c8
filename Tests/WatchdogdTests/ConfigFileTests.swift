import Foundation
import Testing

@Suite struct ConfigFileTests {
    private static func write(_ text: String) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("watchdogd-\(UUID().uuidString).env")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    /// Also with Windows line endings: a file that starts with a comment must not become one
    /// long comment.
    @Test(arguments: ["\n", "\r\n"])
    func aConfigFileSetsWhatTheCommandLineLeavesUnsetAndAFlagWins(lineEnding: String) throws {
        let file = try Self.write([
            "# scrape from elsewhere than loopback",
            "WATCHDOG_METRICS_TOKEN=\"from-file\"",
            "export WATCHDOG_CONFIG_MAX_AGE=17",
            "",
        ].joined(separator: lineEnding))
        defer { try? FileManager.default.removeItem(at: file) }
        let daemon = try Daemon(extraArguments: ["--config", file.path])
        let key = try daemon.addApp("com.example.mail")
        #expect(try daemon.client.request("GET", "/metrics").status == 401, "the file's token is required")
        #expect(try daemon.client.request("GET", "/metrics", token: "from-file").status == 200)
        #expect(try daemon.client.request("GET", "/v1/config?app=com.example.mail", token: key).headers["cache-control"]?.contains("max-age=17") == true)
        daemon.stop()

        let overridden = try Daemon(dataDir: daemon.dataDir, extraArguments: ["--config", file.path, "--metrics-token", "from-flag"])
        #expect(try overridden.client.request("GET", "/metrics", token: "from-flag").status == 200)
        #expect(try overridden.client.request("GET", "/metrics", token: "from-file").status == 401, "the command line wins over the file")
    }

    @Test func theShippedExampleFileIsAccepted() throws {
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("deploy/watchdogd.env")
        let daemon = try Daemon(extraArguments: ["--config", example.path])
        #expect(try daemon.client.request("GET", "/healthz").status == 200)
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
