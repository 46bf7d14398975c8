import Foundation
import Testing
import WatchdogTesting
import WatchdogWire

/// Alert rules restricted to attested installs (`installs: attested`, README "Attested
/// installs"): under `observe` an unattested key holder's data is stored, and moves the rules
/// that read every session — hiding a real regression, or inventing a glitch-free-rate drop —
/// but not the rules that read attested installs only. In memory over a real store, a real
/// loopback receiver; SQLite, or PostgreSQL with `WATCHDOG_TEST_STORE=postgres`.
@Suite struct AttestedAlertTests {
    static let alerts = AlertTests.alerts

    static func rules(named names: [String], condition: String, extra: [String: Any]) -> [[String: Any]] {
        [["name": names[0], "condition": condition, "installs": "all"].merging(extra) { $1 },
         ["name": names[1], "condition": condition, "installs": "attested"].merging(extra) { $1 }]
    }

    @Test func aRegressionOfAttestedInstallsFiresWhateverUnattestedSessionsDiluteIt() throws {
        let fleet = try AttestedFleet(mode: "observe")
        let receiver = try WebhookReceiver()
        let setup = try AlertTests.setUp(receiver, rules: Self.rules(named: ["every install", "attested installs"], condition: "release_regressed",
                                                                     extra: ["minimum_sessions": 50, "minimum_installs": 20]),
                                         app: fleet.application)
        try fleet.attestedRelease(version: "14.1.0", installs: 60, affected: 6)
        try fleet.attestedRelease(version: "14.2.0", installs: 60, affected: 30)
        // The key holder hides it: 1,500 glitch-free sessions of 14.2.0 from fresh installs.
        try fleet.forged(version: "14.2.0", installs: 1500, affected: 0)
        #expect(try AlertTests.pass(setup.app) == (1, 1))
        #expect(receiver.received.count == 1)
        let payload = try #require(receiver.received.first?.json)
        let alert = try #require(payload["alert"] as? [String: Any])
        #expect((alert["rule"] as? [String: Any])?["name"] as? String == "attested installs", "\(alert)")
        #expect(alert["installs"] as? String == "attested" && alert["release"] as? String == "14.2.0 (1)", "\(alert)")
        let comparison = try #require(alert["comparison"] as? [String: Any])
        #expect((comparison["target"] as? [String: Any])?["sessions"] as? Int == 60, "\(comparison)")
        #expect((payload["text"] as? String)?.contains("(attested installs)") == true, "\(payload)")
        // The listing says which installs each rule reads.
        let listed = try setup.app.client.request("GET", "\(Self.alerts)/rules", token: setup.admin).json["rules"] as? [[String: Any]] ?? []
        #expect(Set(listed.compactMap { $0["installs"] as? String }) == ["all", "attested"], "\(listed)")
    }

    @Test func unattestedGlitchesFireOnlyTheRuleThatReadsEveryInstall() throws {
        let fleet = try AttestedFleet(mode: "observe")
        let receiver = try WebhookReceiver()
        let setup = try AlertTests.setUp(receiver, rules: Self.rules(named: ["every install", "attested installs"], condition: "glitch_free_rate_below",
                                                                     extra: ["threshold": 0.8, "minimum_sessions": 50, "minimum_installs": 20]),
                                         app: fleet.application)
        try fleet.attestedRelease(version: "14.2.0", installs: 60, affected: 3)
        // The key holder invents a drop: 300 sessions from fresh installs, every one glitched.
        try fleet.forged(version: "14.2.0", installs: 300, affected: 300)
        #expect(try AlertTests.pass(setup.app) == (1, 1))
        let alert = try #require(receiver.received.first?.json["alert"] as? [String: Any])
        #expect((alert["rule"] as? [String: Any])?["name"] as? String == "every install", "\(alert)")
        #expect(alert["installs"] == nil, "\(alert)")
        // The attested installs' own drop fires the attested rule, on their 60 sessions only.
        try fleet.attestedRelease(version: "14.2.0", installs: 60, affected: 40, from: 60)
        #expect(try AlertTests.pass(setup.app) == (1, 1))
        let second = try #require(receiver.received.last?.json["alert"] as? [String: Any])
        #expect((second["rule"] as? [String: Any])?["name"] as? String == "attested installs", "\(second)")
        #expect(second["sessions"] as? Int == 120, "\(second)")
        let rate = try #require(second["glitch_free_session_rate"] as? Double)
        #expect(abs(rate - 77.0 / 120.0) < 1e-9, "\(second)")
    }

    @Test func installsIsAParameterOfTheRulesThatCompareSessionsOnly() throws {
        let receiver = try WebhookReceiver()
        let setup = try AlertTests.setUp(receiver, rules: [])
        let hook = setup.hook
        for (rule, code) in [(["condition": "new_issue", "installs": "attested"], "invalid_field"),
                             (["condition": "test_crashes", "installs": "attested"], "invalid_field"),
                             (["condition": "release_regressed", "installs": "some"], "invalid_field"),
                             (["condition": "release_regressed", "installs": 1] as [String: Any], "invalid_field")] {
            let response = try setup.app.client.postJSON("\(Self.alerts)/rules", token: setup.admin, json: rule.merging(["hook": hook]) { $1 })
            #expect(response.status == 400 && response.errorCode == code, "\(rule): \(response.text)")
        }
        let made = try setup.app.client.postJSON("\(Self.alerts)/rules", token: setup.admin, json: ["condition": "release_regressed", "hook": hook])
        #expect(made.status == 201 && made.json["installs"] as? String == "all", "\(made.text)")
        let issues = try setup.app.client.postJSON("\(Self.alerts)/rules", token: setup.admin, json: ["condition": "new_issue", "hook": hook])
        #expect(issues.status == 201 && issues.json["installs"] is NSNull, "\(issues.text)")
    }
}
