import Foundation
import Testing
import WatchdogServer
import WatchdogTesting

/// A settings file (`--config`) read as `watchdogd serve` reads it — `SettingsFile`, then
/// `SettingsSources.resolve` over the settings table — and the application run with the
/// result, in memory. (That a wrong value stops the process is in the live ConfigFileTests.)
@Suite struct SettingsFileTests {
    private static func write(_ text: String) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("watchdogd-\(UUID().uuidString).env")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    private static func application(file: URL, flags: [String: [String]] = [:]) throws -> TestApplication {
        let sources = SettingsSources(flags: flags, file: try SettingsFile(path: file.path, known: SettingsTable.fileVariables))
        return try TestApplication { $0 = try sources.resolve(into: $0) }
    }

    /// Also with Windows line endings: a file that starts with a comment must not become one
    /// long comment.
    @Test(arguments: ["\n", "\r\n"])
    func aSettingsFileSetsWhatTheCommandLineLeavesUnsetAndAFlagWins(lineEnding: String) throws {
        let file = try Self.write([
            "# scrape from elsewhere than loopback",
            "WATCHDOG_METRICS_TOKEN=\"from-file\"",
            "export WATCHDOG_CONFIG_MAX_AGE=17",
            "",
        ].joined(separator: lineEnding))
        defer { try? FileManager.default.removeItem(at: file) }
        let app = try Self.application(file: file)
        let key = try app.addApp("com.example.mail")
        #expect(try app.client.request("GET", "/metrics").status == 401, "the file's token is required")
        #expect(try app.client.request("GET", "/metrics", token: "from-file").status == 200)
        #expect(try app.client.request("GET", "/v1/config?app=com.example.mail", token: key).headers["cache-control"]?.contains("max-age=17") == true)

        let overridden = try Self.application(file: file, flags: ["metrics-token": ["from-flag"]])
        #expect(try overridden.client.request("GET", "/metrics", token: "from-flag").status == 200)
        #expect(try overridden.client.request("GET", "/metrics", token: "from-file").status == 401, "the command line wins over the file")
    }

    @Test func theShippedExampleFileIsAccepted() throws {
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("deploy/watchdogd.env")
        let app = try Self.application(file: example)
        #expect(try app.client.request("GET", "/healthz").status == 200)
    }

    @Test func everySettingHasOneVariableAndItsDefaultComesFromServerSettings() {
        let variables = SettingsTable.serve.map(\.variable)
        #expect(Set(variables).count == variables.count)
        #expect(SettingsTable.serve.first { $0.name == "rate-per-key" }?.defaultText == String(Int(ServerSettings().ingestRatePerKey)))
        #expect(SettingsTable.help().contains("--retention-days <n>"))
        #expect(!SettingsTable.help().contains("retention-interval"), "hidden")
    }
}
