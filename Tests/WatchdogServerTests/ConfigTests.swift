import Foundation
import Testing
import WatchdogWire
import WatchdogTesting

@Suite struct ConfigTests {
    @Test func configHasAnETagAndAnswers304UntilAPatchChangesIt() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let admin = try app.addToken(role: "admin", name: "alice")
        let path = "/v1/config?app=com.example.mail&version=14.2.0&build=31245&channel=beta&install_id=I-1"

        let first = try app.client.request("GET", path, token: key)
        #expect(first.status == 200)
        #expect(first.json["test_crash"] as? Bool == false)
        #expect(first.json["enabled"] as? Bool == true)
        #expect(first.json["watchdog_interval_s"] as? Double == 1)
        #expect(first.json["lock_threshold_s"] as? Double == 10)
        #expect(first.json["test_crash_budget"] as? Int == 1)
        let etag = try #require(first.headers["etag"])

        let cached = try app.client.request("GET", path, token: key, headers: ["If-None-Match": etag])
        #expect(cached.status == 304)
        #expect(cached.body.isEmpty)
        #expect(cached.headers["etag"] == etag)

        let patch = try app.client.request("PATCH", "/v1/admin/apps/com.example.mail/config", token: admin, body: Array(#"{"test_crash": true}"#.utf8))
        #expect(patch.status == 200)
        #expect(patch.json["version"] as? Int == 1)
        #expect(patch.json["updated_by"] as? String == "alice")
        #expect((patch.json["defaults"] as? [String: Any])?["test_crash"] as? Bool == true)

        let changed = try app.client.request("GET", path, token: key, headers: ["If-None-Match": etag])
        #expect(changed.status == 200)
        #expect(changed.json["test_crash"] as? Bool == true)
        #expect(changed.headers["x-config-version"] == "1")
        #expect(changed.headers["cache-control"] == "private, max-age=60")
        #expect(changed.headers["etag"] != etag)
    }

    @Test func wrongTypesAndUnknownKeysGet400NamingTheKey() throws {
        let app = try TestApplication()
        _ = try app.addApp("com.example.mail")
        let admin = try app.addToken(role: "admin")
        let cases: [(String, String, String)] = [
            (#"{"test_crash": "yes"}"#, "invalid_config_value", "test_crash must be true or false"),
            (#"{"report_sample_rate": 1.5}"#, "invalid_config_value", "report_sample_rate must be a number from 0 to 1"),
            (#"{"test_crash_budget": 1.5}"#, "invalid_config_value", "test_crash_budget must be a whole number"),
            (#"{"test_crash_expires_at": "soon"}"#, "invalid_config_value", "test_crash_expires_at must be an RFC 3339 time"),
            (#"{"crash_everything": true}"#, "unknown_config_key", "crash_everything is not a config key"),
            (#"{"defaults": {"autofix": true}}"#, "unknown_config_key", "defaults.autofix is not a config key"),
            (#"{"version": 9}"#, "invalid_config_value", "version is assigned by the server"),
            (#"[1, 2]"#, "invalid_shape", "the body must be a JSON object"),
            (#"{"rules": [{"id": "r1", "set": {"test_crash": true}, "match": {"percent": 150}}]}"#, "invalid_config_value", "rules[0].match.percent must be a number from 0 to 100"),
            (#"{"rules": [{"set": {"test_crash": true}}, {"set": {"auto_fix": "yes"}}]}"#, "invalid_config_value", "rules[1].set.auto_fix must be true or false"),
            (#"{"rules": [{"set": {"test_crash": true}, "match": {"versions": "about 14"}}]}"#, "invalid_config_value", "rules[0].match.versions has \"about\""),
            (#"{"rules": [{"id": "a", "set": {"test_crash": true}}, {"id": "a", "set": {"auto_fix": true}}]}"#, "invalid_config_value", "rules[1].id \"a\" is used by another rule"),
            (#"{"rules": [{"set": {"test_crash": true}, "match": {"idioms": ["watch"]}}]}"#, "invalid_config_value", "rules[0].match.idioms[0] must be one of"),
            (#"{"test_crash": tru"#, "invalid_json", "the body must be a JSON merge patch"),
        ]
        for (body, code, message) in cases {
            let response = try app.client.request("PATCH", "/v1/admin/apps/com.example.mail/config", token: admin, body: Array(body.utf8))
            #expect(response.status == 400, "\(body)")
            #expect(response.errorCode == code, "\(body)")
            #expect(response.errorMessage?.hasPrefix(message) == true, "\(body): \(response.errorMessage ?? "")")
        }
        let document = try app.client.request("GET", "/v1/admin/apps/com.example.mail/config", token: admin)
        #expect(document.json["version"] as? Int == 0)
    }

    @Test func staleIfMatchGets409AndChangesNothing() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let admin = try app.addToken(role: "admin")
        let first = try app.client.request("PATCH", "/v1/admin/apps/com.example.mail/config", token: admin, body: Array(#"{"auto_fix": true}"#.utf8))
        let etag = try #require(first.headers["etag"])
        let second = try app.client.request("PATCH", "/v1/admin/apps/com.example.mail/config", token: admin,
                                               headers: ["If-Match": etag], body: Array(#"{"frame_tolerance_pt": 2}"#.utf8))
        #expect(second.status == 200)
        let stale = try app.client.request("PATCH", "/v1/admin/apps/com.example.mail/config", token: admin,
                                              headers: ["If-Match": etag], body: Array(#"{"test_crash": true}"#.utf8))
        #expect(stale.status == 409)
        #expect(stale.errorCode == "stale_config")
        let effective = try app.client.request("GET", "/v1/config?app=com.example.mail", token: key)
        #expect(effective.json["test_crash"] as? Bool == false)
        #expect(effective.json["auto_fix"] as? Bool == true)
        #expect(effective.json["frame_tolerance_pt"] as? Double == 2)
        #expect(effective.headers["x-config-version"] == "2")
        let history = try app.client.request("GET", "/v1/admin/apps/com.example.mail/config/history", token: admin)
        #expect((history.json["history"] as? [[String: Any]])?.count == 2, "the refused change is not in the history")
    }

    @Test func nullRestoresTheDefaultAndExpiredTestCrashIsOff() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let admin = try app.addToken(role: "admin")
        let yesterday = Timestamp.format(milliseconds: app.clock.now - 86_400_000)
        let patch = #"{"test_crash": true, "test_crash_expires_at": "\#(yesterday)", "auto_fix": true}"#
        #expect(try app.client.request("PATCH", "/v1/admin/apps/com.example.mail/config", token: admin, body: Array(patch.utf8)).status == 200)
        let expired = try app.client.request("GET", "/v1/config?app=com.example.mail", token: key)
        #expect(expired.json["test_crash"] as? Bool == false)
        #expect(try app.client.request("PATCH", "/v1/admin/apps/com.example.mail/config", token: admin, body: Array(#"{"auto_fix": null}"#.utf8)).status == 200)
        #expect(try app.client.request("GET", "/v1/config?app=com.example.mail", token: key).json["auto_fix"] as? Bool == false)
    }

    @Test func aDocumentPutBackAsGetShowsItIsAcceptedAndShownFieldsOfAnotherTypeAreRefused() throws {
        let app = try TestApplication()
        _ = try app.addApp("com.example.mail")
        let admin = try app.addToken(role: "admin")
        let path = "/v1/admin/apps/com.example.mail/config"
        #expect(try app.client.request("PATCH", path, token: admin, body: Array(#"{"auto_fix": true}"#.utf8)).status == 200)
        let shown = try app.client.request("GET", path, token: admin)
        #expect(shown.json["updated_at"] is String && shown.json["version"] as? Int == 1)
        let back = try app.client.request("PUT", path, token: admin, body: shown.body)
        #expect(back.status == 200, "\(back.text)")
        for (field, value) in [("updated_at", "74833"), ("updated_at", #""yesterday""#), ("updated_by", "7"), ("version", "-1"), ("version", "1.5"), ("version", #""1""#)] {
            let body = #"{"defaults": {"auto_fix": true}, "rules": [], "\#(field)": \#(value)}"#
            let answer = try app.client.request("PUT", path, token: admin, body: Array(body.utf8))
            #expect(answer.status == 400 && answer.errorCode == "invalid_config_value", "\(field): \(value) → \(answer.status) \(answer.text)")
            #expect((answer.json["error"] as? [String: Any])?["message"] as? String ?? "" != "", "\(answer.text)")
        }
        #expect(try app.client.request("PUT", path, token: admin, body: Array(#"{"defaults": {}, "rules": [], "updated_at": null, "updated_by": null, "version": 0}"#.utf8)).status == 200)
    }

    @Test func configRequiresTheAppParameter() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let response = try app.client.request("GET", "/v1/config", token: key)
        #expect(response.status == 400)
        #expect(response.errorCode == "missing_parameter")
    }
}
