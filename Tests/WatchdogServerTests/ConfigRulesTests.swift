import Foundation
import Testing
import WatchdogTesting

/// Rules, cohorts, history, rollback, budget and expiry of the remote config.
@Suite struct ConfigRulesTests {
    static func patch(_ app: TestApplication, _ token: String, _ body: String, headers: [String: String] = [:], query: String = "") throws -> TestResponse {
        try app.client.request("PATCH", "/v1/admin/apps/com.example.mail/config\(query)", token: token, headers: headers, body: Array(body.utf8))
    }

    /// The installs whose effective config has `flag` (`test_crash` by default) on.
    static func cohort(_ app: TestApplication, key: String, installs: [String], key flag: String = "test_crash") throws -> Set<String> {
        var chosen = Set<String>()
        for install in installs {
            let response = try app.client.request("GET", "/v1/config?app=com.example.mail&version=14.2.0&build=31245&channel=beta&install_id=\(install)", token: key)
            if response.json[flag] as? Bool == true { chosen.insert(install) }
        }
        return chosen
    }

    @Test func aFivePercentRulePicksAStableCohortAndAnotherRuleAnotherOne() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let admin = try app.addToken(role: "admin")
        let rules = #"{"rules": [{"id": "crash5", "name": "crash 5 % of beta testers on 14.2", "match": {"versions": ">=14.2.0 <15", "channels": ["beta"], "percent": 5}, "set": {"test_crash": true}}, {"id": "fix5", "match": {"percent": 5}, "set": {"auto_fix": true}}]}"#
        #expect(try Self.patch(app, admin, rules).status == 200)
        let installs = (0..<10_000).map { "install-\($0)" }
        let first = try Self.cohort(app, key: key, installs: installs)
        #expect((400...600).contains(first.count), "\(first.count) of 10,000 got test_crash")
        #expect(try Self.cohort(app, key: key, installs: installs) == first, "same ids on every call")
        try app.restart()
        #expect(try Self.cohort(app, key: key, installs: installs) == first, "same ids after a restart")
        let second = try Self.cohort(app, key: key, installs: installs, key: "auto_fix")
        #expect((400...600).contains(second.count))
        #expect(first.intersection(second).count < 100, "another rule picks another cohort (overlap \(first.intersection(second).count))")

        // Outside the version range or channel, nobody gets it.
        let old = try app.client.request("GET", "/v1/config?app=com.example.mail&version=14.1.9&channel=beta&install_id=\(first.first!)", token: key)
        #expect(old.json["test_crash"] as? Bool == false)
        let explainPath = "/v1/config?app=com.example.mail&version=14.2.0&channel=beta&install_id=\(first.first!)&explain=true"
        // The ingest key is public: which rule switched an install is not for it (issue 39).
        let refused = try app.client.request("GET", explainPath, token: key)
        #expect(refused.status == 403 && !refused.text.contains("crash5"), "\(refused.text)")
        let explained = try app.client.request("GET", explainPath, token: try app.addToken(role: "viewer"))
        let keys = (explained.json["explain"] as? [String: Any])?["keys"] as? [String: [String: Any]]
        #expect(keys?["test_crash"]?["source"] as? String == "rule crash5 (crash 5 % of beta testers on 14.2)")
        #expect(keys?["watchdog_interval_s"]?["source"] as? String == "built-in default")
    }

    @Test func historyRecordsEveryChangeAndRollbackRestoresTheEarlierConfigByteForByte() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let admin = try app.addToken(role: "admin", name: "alice")
        #expect(try Self.patch(app, admin, #"{"auto_fix": true, "frame_tolerance_pt": 2}"#).status == 200)
        let path = "/v1/config?app=com.example.mail&version=14.2.0&install_id=I-1"
        let good = try app.client.request("GET", path, token: key)
        let second = try Self.patch(app, admin, #"{"test_crash": true, "rules": [{"id": "r1", "match": {"versions": ">=14"}, "set": {"watchdog_interval_s": 0.5}}]}"#)
        let etag = try #require(second.headers["etag"])
        #expect(try Self.patch(app, admin, #"{"auto_fix": false}"#, headers: ["If-Match": etag]).status == 200)
        #expect(try Self.patch(app, admin, #"{"enabled": false}"#, headers: ["If-Match": etag]).status == 409, "stale")
        let changed = try app.client.request("GET", path, token: key)
        #expect(changed.body != good.body)
        #expect(changed.json["enabled"] as? Bool == true, "the stale change did nothing")

        let history = try app.client.request("GET", "/v1/admin/apps/com.example.mail/config/history", token: admin)
        let listed = history.json["history"] as? [[String: Any]] ?? []
        #expect(listed.compactMap { $0["version"] as? Int } == [3, 2, 1])
        let entries = try listed.map { try app.client.request("GET", "/v1/admin/apps/com.example.mail/config/history/\($0["version"] as? Int ?? 0)", token: admin).json }
        #expect(entries.allSatisfy { $0["changed_by"] as? String == "alice" && $0["after"] is [String: Any] })
        #expect(entries.last?["before"] is NSNull)
        let v2 = entries[1]
        #expect(v2["version"] as? Int == 2)
        #expect(((v2["before"] as? [String: Any])?["defaults"] as? [String: Any])?["test_crash"] == nil)
        #expect(((v2["after"] as? [String: Any])?["defaults"] as? [String: Any])?["test_crash"] as? Bool == true)

        let rollback = try app.client.postJSON("/v1/admin/apps/com.example.mail/config/rollback", token: admin, json: ["version": 1])
        #expect(rollback.status == 200)
        #expect(rollback.json["version"] as? Int == 4, "a rollback is a new version")
        let restored = try app.client.request("GET", path, token: key)
        #expect(restored.body == good.body, "byte for byte")
        #expect(restored.headers["etag"] == good.headers["etag"])
        #expect(restored.headers["x-config-version"] == "4")
        #expect(try app.client.postJSON("/v1/admin/apps/com.example.mail/config/rollback", token: admin, json: ["version": 99]).status == 404)
    }

    @Test func aDryRunSaysWhomAChangeWouldSwitchWithoutSavingIt() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let admin = try app.addToken(role: "admin")
        let now = Date()
        func session(_ version: String, _ install: String) -> [String: Any] {
            var session = Fixtures.session(version: version, build: "1")
            session["install_id"] = install
            session["started_at"] = ISO8601DateFormatter().string(from: now.addingTimeInterval(-3600))
            return session
        }
        let sessions = (0..<40).map { session("14.2.0", "new-\($0)") } + (0..<10).map { session("14.1.0", "old-\($0)") }
        #expect(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": sessions]).status == 202)
        let change = #"{"rules": [{"id": "crash", "match": {"versions": ">=14.2"}, "set": {"test_crash": true}}]}"#
        let dry = try Self.patch(app, admin, change, query: "?dry_run=true")
        #expect(dry.status == 200)
        #expect(dry.json["dry_run"] as? Bool == true)
        let impact = dry.json["impact"] as? [[String: Any]] ?? []
        #expect(impact.count == 2)
        let newer = try #require(impact.first { $0["release"] as? String == "14.2.0 (1)" })
        #expect(newer["recent_installs"] as? Int == 40 && newer["switched"] as? Int == 40)
        #expect((newer["keys"] as? [String: Int])?["test_crash"] == 40)
        let older = try #require(impact.first { $0["release"] as? String == "14.1.0 (1)" })
        #expect(older["switched"] as? Int == 0)
        #expect(try app.client.request("GET", "/v1/admin/apps/com.example.mail/config", token: admin).json["version"] as? Int == 0, "not saved")
        let put = try app.client.request("PUT", "/v1/admin/apps/com.example.mail/config", token: admin, body: Array(#"{"defaults": {"auto_fix": true}, "rules": []}"#.utf8))
        #expect(put.status == 200 && put.json["version"] as? Int == 1)
    }

    @Test func anInstallOverItsTestCrashBudgetAndEveryoneAfterExpiryGetTestCrashOff() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let admin = try app.addToken(role: "admin")
        #expect(try Self.patch(app, admin, #"{"test_crash": true, "test_crash_budget": 2}"#).status == 200)
        func crash(_ install: String) throws -> [String: Any] {
            var report = try Fixtures.freshReport()
            report["install_id"] = install
            report["action"] = ["auto_fixed": false, "test_crash": true]
            return report
        }
        func testCrash(_ install: String) throws -> Bool? {
            try app.client.request("GET", "/v1/config?app=com.example.mail&install_id=\(install)", token: key).json["test_crash"] as? Bool
        }
        #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": [try crash("crashy")]]).status == 202)
        #expect(try testCrash("crashy") == true, "1 of 2 used")
        #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": [try crash("crashy")]]).status == 202)
        #expect(try testCrash("crashy") == false, "budget used up")
        #expect(try testCrash("calm") == true)
        let anonymous = try app.client.request("GET", "/v1/config?app=com.example.mail", token: key)
        #expect(anonymous.json["test_crash"] as? Bool == false, "no install id: the budget cannot be kept, so no test crash")
        try app.restart()
        #expect(try testCrash("crashy") == false, "counts survive a restart")

        let soon = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(app.clock.now + 2_000) / 1000))
        #expect(try Self.patch(app, admin, #"{"test_crash_expires_at": "\#(soon)"}"#).status == 200)
        app.clock.advance(milliseconds: 1_000)
        #expect(try testCrash("calm") == true, "a second before expiry")
        app.clock.advance(milliseconds: 1_500)
        #expect(try testCrash("calm") == false, "expired for everyone")
        #expect(try testCrash("other") == false)
    }
}
