import Foundation
import Testing
@testable import WatchdogServer

/// `serve --oidc-…`: flags and the config file both set it, and a configuration nobody could
/// sign in with, or one that would talk to the provider in the clear, stops `serve` at start.
@Suite struct OIDCConfigurationTests {
    func resolve(_ flags: [String: [String]], file: String? = nil) throws -> ServerSettings {
        var sources = SettingsSources(flags: flags)
        if let file {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-\(UUID().uuidString).env").path
            try file.write(toFile: path, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: path) }
            sources.file = try SettingsFile(path: path, known: SettingsTable.fileVariables)
        }
        return try sources.resolve()
    }

    @Test func theConfigFileSetsTheRulesAndAFlagWins() throws {
        let settings = try resolve(["oidc-client-id": ["from-flag"]], file: """
            WATCHDOG_OIDC_ISSUER=https://idp.example.com/realms/acme
            WATCHDOG_OIDC_CLIENT_ID=from-file
            WATCHDOG_OIDC_ROLE=group:sre=admin, group:mail-team=operator:com.example.mail+com.example.cal
            """)
        let configuration = try #require(try OIDCConfiguration.from(settings))
        #expect(configuration.clientID == "from-flag")
        #expect(configuration.rules.map(\.description) == ["group:sre=admin", "group:mail-team=operator:com.example.cal+com.example.mail"])
        #expect(configuration.providerName == "idp.example.com")
    }

    @Test func aMalformedRuleIsRefusedWithWhereItCameFrom() {
        #expect { try resolve(["oidc-role": ["group:sre=superuser"]]) } throws: { error in
            "\(error)".contains("--oidc-role must be group:NAME=ROLE") && "\(error)".contains("superuser")
        }
    }

    @Test func aConfigurationNobodyCouldUseOrInTheClearStopsServe() throws {
        let base: [String: [String]] = ["oidc-issuer": ["https://idp.example.com"], "oidc-client-id": ["watchdog"], "oidc-role": ["domain:example.com=viewer"]]
        #expect(try OIDCConfiguration.from(try resolve(base)) != nil)
        #expect(try OIDCConfiguration.from(try resolve([:])) == nil)
        var noRole = base
        noRole["oidc-role"] = nil
        #expect(throws: SettingsError.self) { try OIDCConfiguration.from(try resolve(noRole)) }
        var noClient = base
        noClient["oidc-client-id"] = nil
        #expect(throws: SettingsError.self) { try OIDCConfiguration.from(try resolve(noClient)) }
        var clear = base
        clear["oidc-issuer"] = ["http://idp.example.com"]
        #expect(throws: SettingsError.self) { try OIDCConfiguration.from(try resolve(clear)) }
        clear["oidc-issuer"] = ["http://127.0.0.1:9000/openid"]
        #expect(try OIDCConfiguration.from(try resolve(clear)) != nil)
        var missingSecret = base
        missingSecret["oidc-client-secret-file"] = ["/nonexistent/oidc-secret"]
        #expect(throws: SettingsError.self) { try OIDCConfiguration.from(try resolve(missingSecret)) }
    }
}
