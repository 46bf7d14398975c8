import Foundation
import Testing
import WatchdogTesting

/// `compare` names the config rules that switch part of either release (issue 44): such a
/// release mixes installs with and without the switch.
@Suite struct PartialRulesTests {
    @Test func compareNamesTheRulesThatSwitchPartOfEitherRelease() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let admin = try app.addToken(role: "admin", name: "admin")
        _ = try VerdictTests.sessions(app, key: key, version: "14.1.0", build: "1", count: 20)
        _ = try VerdictTests.sessions(app, key: key, version: "14.2.0", build: "2", count: 20)
        let config = Array(#"""
            {"rules": [
              {"id": "half-new", "name": "half of 14.2", "match": {"versions": ">=14.2.0", "percent": 50}, "set": {"auto_fix": true}},
              {"id": "everyone", "match": {"percent": 100}, "set": {"frame_tolerance_pt": 2}},
              {"id": "old-only", "match": {"versions": "<14", "percent": 10}, "set": {"auto_fix": true}},
              {"id": "some-of-all", "match": {"percent": 5}, "set": {"auto_fix": false}}
            ]}
            """#.utf8)
        let put = try app.client.request("PUT", "/v1/admin/apps/com.example.mail/config", token: admin, body: config)
        #expect(put.status == 200, "\(put.text)")
        let compare = try app.client.request("GET", "/v1/apps/com.example.mail/compare?base=14.1.0&target=14.2.0", token: admin)
        let rules = try #require(compare.json["partial_rules"] as? [[String: Any]], "\(compare.text.prefix(400))")
        #expect(rules.map { $0["rule"] as? String } == ["half-new", "some-of-all"])
        #expect(rules.first?["sides"] as? [String] == ["target"])
        #expect(rules.last?["sides"] as? [String] == ["base", "target"])
        // The cohorts and the gate carry no such list.
        let cohorts = try app.client.request("GET", "/v1/apps/com.example.mail/cohorts?release=14.2.0&rule=half-new", token: admin)
        #expect(cohorts.status == 200 && cohorts.json["partial_rules"] is NSNull, "\(cohorts.text.prefix(300))")
    }
}
