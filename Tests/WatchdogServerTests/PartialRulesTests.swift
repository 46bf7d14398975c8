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

/// Compare names the guarded rollout switching part of a release, with its step (issue 44).
@Suite struct PartialRuleRolloutTests {
    @Test func compareNamesTheRolloutSwitchingPartOfARelease() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let admin = try app.addToken(role: "admin", name: "admin")
        let viewer = try app.addToken(role: "viewer", name: "viewer")
        _ = try VerdictTests.sessions(app, key: key, version: "14.1.0", build: "1", count: 20)
        _ = try VerdictTests.sessions(app, key: key, version: "14.2.0", build: "2", count: 20)
        let config = Array(#"""
            {"rules": [
              {"id": "fix", "match": {"versions": ">=14.2.0", "percent": 0}, "set": {"auto_fix": true}},
              {"id": "tune", "match": {"versions": ">=14.2.0", "percent": 30}, "set": {"frame_tolerance_pt": 2}}
            ]}
            """#.utf8)
        #expect(try app.client.request("PUT", "/v1/admin/apps/com.example.mail/config", token: admin, body: config).status == 200)
        let started = try app.client.postJSON("/v1/admin/apps/com.example.mail/rollouts", token: admin,
                                              json: ["rule": "fix", "steps": [10, 50, 100], "minimum_sessions": 1, "minimum_hours": 1] as [String: Any])
        #expect(started.status == 201, "\(started.text)")
        func rules() throws -> [[String: Any]] {
            let compare = try app.client.request("GET", "/v1/apps/com.example.mail/compare?base=14.1.0&target=14.2.0", token: viewer)
            return try #require(compare.json["partial_rules"] as? [[String: Any]], "\(compare.text.prefix(400))")
        }
        let during = try rules()
        #expect(during.map { $0["rule"] as? String } == ["fix", "tune"])
        let rollout = try #require(during.first?["rollout"] as? [String: Any], "\(during)")
        #expect(rollout["status"] as? String == "active" && rollout["step"] as? Int == 1 && rollout["steps"] as? Int == 3 && rollout["percent"] as? Double == 10,
                "\(rollout)")
        #expect(during.last?["rollout"] is NSNull, "\(during)")
        // Aborted, the rollout no longer switches anything on its own: it is not named.
        #expect(try app.client.postJSON("/v1/admin/apps/com.example.mail/rollouts/fix/abort", token: admin, json: [:]).status == 200)
        #expect(try rules().allSatisfy { $0["rollout"] is NSNull })
    }
}
