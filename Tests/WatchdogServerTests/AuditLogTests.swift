import Foundation
import Testing
import WatchdogTesting

/// The audit log (issue 41): every change is one row with who, from where, what and which app,
/// readable with `GET /v1/admin/audit`; no secret is ever in it. Runs on the store the suite
/// runs on (SQLite, or PostgreSQL with `WATCHDOG_TEST_STORE=postgres`).
@Suite struct AuditLogTests {
    static let app = "com.example.mail"
    static let base = "/v1/admin/apps/com.example.mail"

    /// Every row, oldest first, read page by page through the API.
    static func rows(_ app: TestApplication, token: String, query: String = "") throws -> [[String: Any]] {
        var all: [[String: Any]] = []
        var before: String?
        repeat {
            let separator = query.isEmpty ? "?" : "?\(query)&"
            let page = try app.client.request("GET", "/v1/admin/audit\(separator)limit=5\(before.map { "&before=\($0)" } ?? "")", token: token)
            #expect(page.status == 200, "\(page.text)")
            all += page.json["entries"] as? [[String: Any]] ?? []
            before = page.json["next_before"] as? String
        } while before != nil
        return all.reversed()
    }

    @Test func everyKindOfChangeIsOneRowWithItsActorAppAndAddressAndNoSecret() throws {
        let app = try TestApplication()
        _ = try app.addApp(Self.app)
        let admin = try app.addToken(role: "admin", name: "alice")
        let operatorToken = try app.addToken(role: "operator", name: "olga", apps: [Self.app])
        let client = app.client(from: "10.1.2.3")
        func call(_ method: String, _ path: String, _ token: String, _ body: String = "", expect status: Int) throws -> TestResponse {
            let response = try client.request(method, path, token: token, body: Array(body.utf8))
            #expect(response.status == status, "\(method) \(path): \(response.text)")
            return response
        }
        let created = try call("POST", "/v1/admin/apps", admin, #"{"app": "com.example.new"}"#, expect: 201)
        let newKey = try #require(created.json["ingest_key"] as? String)
        let key = try call("POST", "\(Self.base)/keys", admin, "{}", expect: 201)
        let keyID = try #require(key.json["key_id"] as? String)
        _ = try call("DELETE", "\(Self.base)/keys/\(keyID)", admin, expect: 204)
        _ = try call("PUT", "\(Self.base)/admission", admin, #"{"mode": "open"}"#, expect: 200)
        _ = try call("PUT", "\(Self.base)/attestation", admin, #"{"mode": "off"}"#, expect: 200)
        let declared = try call("POST", "\(Self.base)/releases", operatorToken, #"{"version": "2.0", "build": "7"}"#, expect: 201)
        let release = try #require(declared.json["id"] as? String)
        _ = try call("DELETE", "\(Self.base)/releases/\(release)?confirm=\(release)", operatorToken, expect: 200)
        let another = try #require(try call("POST", "\(Self.base)/releases", operatorToken, #"{"version": "3.0", "build": "8"}"#, expect: 201).json["id"] as? String)
        _ = try call("DELETE", "\(Self.base)/releases/\(another)/listing", operatorToken, expect: 200)
        _ = try call("PATCH", "\(Self.base)/config?dry_run=true", operatorToken, #"{"test_crash": true}"#, expect: 200)
        _ = try call("PUT", "\(Self.base)/config", operatorToken, #"{"rules": [{"id": "fix", "match": {"percent": 0}, "set": {"auto_fix": true}}]}"#, expect: 200)
        _ = try call("PATCH", "\(Self.base)/config", operatorToken, #"{"test_crash": true}"#, expect: 200)
        _ = try call("POST", "\(Self.base)/config/rollback", operatorToken, #"{"version": 1}"#, expect: 200)
        // A rollback to the version in force changes nothing, and leaves no row.
        _ = try call("POST", "\(Self.base)/config/rollback", operatorToken, #"{"version": 3}"#, expect: 200)
        _ = try call("POST", "\(Self.base)/rollouts", operatorToken, #"{"rule": "fix"}"#, expect: 201)
        _ = try call("POST", "\(Self.base)/rollouts/fix/pause", operatorToken, expect: 200)
        _ = try call("POST", "\(Self.base)/rollouts/fix/resume", operatorToken, expect: 200)
        let hook = try call("POST", "\(Self.base)/alerts/hooks", operatorToken, #"{"url": "https://hooks.example.com/services/T0/B0/SECRETPATH"}"#, expect: 201)
        let hookID = try #require(hook.json["id"] as? String)
        let hookSecret = try #require(hook.json["secret"] as? String)
        let rule = try call("POST", "\(Self.base)/alerts/rules", operatorToken, #"{"condition": "test_crashes", "hook": "\#(hookID)"}"#, expect: 201)
        let ruleID = try #require(rule.json["id"] as? String)
        _ = try call("DELETE", "\(Self.base)/alerts/rules/\(ruleID)", operatorToken, expect: 204)
        _ = try call("DELETE", "\(Self.base)/alerts/hooks/\(hookID)", operatorToken, expect: 204)
        // The guard's own step: the rule's percent set by hand, the guard aborts the rollout.
        _ = try call("POST", "\(Self.base)/rollouts/fix/pause", operatorToken, expect: 200)
        _ = try call("POST", "\(Self.base)/rollouts/fix/resume", operatorToken, expect: 200)
        let config = try client.request("GET", "\(Self.base)/config", token: admin)
        var document = config.json
        document["rules"] = [["id": "fix", "match": ["percent": 50], "set": ["auto_fix": true]]]
        _ = try call("PUT", "\(Self.base)/config", admin, String(decoding: try JSONSerialization.data(withJSONObject: ["rules": document["rules"]!]), as: UTF8.self), expect: 200)
        try app.application.evaluateRollouts()
        // Sign-ins: a token, a one-time link, and a wrong token and a used link.
        #expect(try client.postJSON("/v1/auth/login", token: nil, json: ["token": admin]).status == 200)
        #expect(try client.postJSON("/v1/auth/login", token: nil, json: ["token": "wda_k00000000_" + String(repeating: "0", count: 64)]).status == 401)
        let link = try #require(try client.request("POST", "/v1/auth/links", token: operatorToken).json["path"] as? String)
        let code = String(link.split(separator: "=")[1].prefix { $0 != "&" })
        for expected in [303, 401] {
            let used = try client.request("POST", "/login", headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Array("code=\(code)".utf8))
            #expect(used.status == expected)
        }

        let rows = try Self.rows(app, token: admin)
        let seen = rows.map { "\($0["action"] as? String ?? "?") \($0["actor"] as? String ?? "?") \($0["app"] as? String ?? "-")" }
        let expected = [
            "app.add alice com.example.new",
            "key.add alice \(Self.app)",
            "key.revoke alice \(Self.app)",
            "admission.save alice \(Self.app)",
            "attestation.save alice \(Self.app)",
            "release.declare olga \(Self.app)",
            "release.delete olga \(Self.app)",
            "release.declare olga \(Self.app)",
            "release.unlist olga \(Self.app)",
            "config.update olga \(Self.app)",
            "config.update olga \(Self.app)",
            "config.rollback olga \(Self.app)",
            "rollout.start olga \(Self.app)",
            "rollout.pause olga \(Self.app)",
            "rollout.resume olga \(Self.app)",
            "alert.hook.add olga \(Self.app)",
            "alert.rule.add olga \(Self.app)",
            "alert.rule.delete olga \(Self.app)",
            "alert.hook.delete olga \(Self.app)",
            "rollout.pause olga \(Self.app)",
            "rollout.resume olga \(Self.app)",
            "config.update alice \(Self.app)",
            "rollout.guard.aborted rollout-guard \(Self.app)",
            "signin alice -",
            "signin.failed  -",
            "signin.link olga -",
            "signin olga -",
            "signin.failed  -",
        ]
        #expect(seen == expected, "\(seen.joined(separator: "\n"))")
        #expect(rows.allSatisfy { $0["address"] as? String == "10.1.2.3" || $0["actor"] as? String == "rollout-guard" }, "every request's address")
        // Before and after: the config documents of a change, the settings of admission.
        let configRow = try #require(rows.first { $0["action"] as? String == "config.rollback" })
        let before = try #require(configRow["before"] as? [String: Any], "\(configRow)")
        let after = try #require(configRow["after"] as? [String: Any], "\(configRow)")
        #expect((before["defaults"] as? [String: Any])?["test_crash"] as? Bool == true && (after["defaults"] as? [String: Any])?["test_crash"] as? Bool != true,
                "\(configRow)")
        let admissionRow = try #require(rows.first { $0["action"] as? String == "admission.save" })
        #expect((admissionRow["after"] as? [String: Any])?["mode"] as? String == "open")

        // No secret anywhere: tokens, keys, the hook's secret and path, the link's code.
        let everything = try client.request("GET", "/v1/admin/audit.ndjson", token: admin)
        #expect(everything.status == 200 && everything.text.split(separator: "\n").count == rows.count)
        for secret in [admin, String(admin.suffix(64)), operatorToken, newKey, hookSecret, "SECRETPATH", code] {
            #expect(!everything.text.contains(secret), "the audit log holds a secret")
        }
        // Filters: app, actor, action, time.
        #expect(try Self.rows(app, token: admin, query: "actor=rollout-guard").count == 1)
        #expect(try Self.rows(app, token: admin, query: "app=com.example.new").count == 1)
        #expect(try Self.rows(app, token: admin, query: "action=signin.failed").count == 2)
        let future = "2100-01-01T00:00:00Z"
        #expect(try Self.rows(app, token: admin, query: "from=\(future)").isEmpty)
        #expect(try Self.rows(app, token: admin, query: "to=\(future)").count == rows.count)
    }

    /// The kinds the test above leaves out: admitting a release, a hook's test delivery, the
    /// rollout steps advance and abort, and four eyes (its settings, a proposal approved by
    /// another person — the change is the proposer's —, a proposal refused).
    @Test func admissionsHookTestsRolloutStepsAndFourEyesAreRowsWithTheirActorAndApp() throws {
        let app = try TestApplication()
        let key = try app.addApp(Self.app)
        let admin = try app.addToken(role: "admin", name: "alice")
        let olga = try app.addToken(role: "operator", name: "olga")
        let oscar = try app.addToken(role: "operator", name: "oscar", apps: [Self.app])
        func call(_ method: String, _ path: String, _ token: String, _ body: String = "", expect status: Int) throws -> TestResponse {
            let response = try app.client.request(method, path, token: token, body: Array(body.utf8))
            #expect(response.status == status, "\(method) \(path): \(response.text)")
            return response
        }
        _ = try call("POST", "\(Self.base)/releases", olga, #"{"version": "2.0", "build": "7"}"#, expect: 201)
        // A release with data (its listing can go and come back): a report of 3.0 (9).
        #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": [try Fixtures.freshReport(version: "3.0", build: "9")]]).status == 202)
        let release = ReleaseAdmissionTests.id("3.0", "9")
        _ = try call("DELETE", "\(Self.base)/releases/\(release)/listing", olga, expect: 200)
        _ = try call("POST", "\(Self.base)/releases/\(release)/admit", olga, expect: 200)
        let hook = try #require(try call("POST", "\(Self.base)/alerts/hooks", olga, #"{"url": "https://hooks.example.com/T0/SECRETPATH"}"#, expect: 201).json["id"] as? String)
        _ = try call("POST", "\(Self.base)/alerts/hooks/\(hook)/test", olga, expect: 202)
        _ = try call("PUT", "\(Self.base)/config", olga, #"{"rules": [{"id": "fix", "match": {"percent": 0}, "set": {"auto_fix": true}}]}"#, expect: 200)
        _ = try call("POST", "\(Self.base)/rollouts", olga, #"{"rule": "fix"}"#, expect: 201)
        _ = try call("POST", "\(Self.base)/rollouts/fix/advance", olga, expect: 200)
        _ = try call("POST", "\(Self.base)/rollouts/fix/abort", olga, expect: 200)
        _ = try call("PUT", "\(Self.base)/approvals", admin, #"{"require": ["test_crash"]}"#, expect: 200)
        let proposed = try call("PATCH", "\(Self.base)/config", olga, #"{"test_crash": true}"#, expect: 202)
        let id = try #require((proposed.json["proposal"] as? [String: Any])?["id"] as? String)
        _ = try call("POST", "\(Self.base)/proposals/\(id)/approve", oscar, expect: 200)
        let second = try call("PATCH", "\(Self.base)/config", olga, #"{"defaults": {"test_crash": false}, "rules": [{"id": "t", "match": {"percent": 5}, "set": {"test_crash": true}}]}"#, expect: 202)
        let secondID = try #require((second.json["proposal"] as? [String: Any])?["id"] as? String)
        _ = try call("POST", "\(Self.base)/proposals/\(secondID)/refuse", oscar, #"{"reason": "too many testers"}"#, expect: 200)

        let rows = try Self.rows(app, token: admin)
        let seen = rows.map { "\($0["action"] as? String ?? "?") \($0["actor"] as? String ?? "?") \($0["app"] as? String ?? "-")" }
        #expect(seen == [
            "release.declare olga \(Self.app)", "release.unlist olga \(Self.app)", "release.admit olga \(Self.app)",
            "alert.hook.add olga \(Self.app)", "alert.hook.test olga \(Self.app)",
            "config.update olga \(Self.app)", "rollout.start olga \(Self.app)", "rollout.advance olga \(Self.app)", "rollout.abort olga \(Self.app)",
            "approvals.save alice \(Self.app)", "proposal.create olga \(Self.app)", "proposal.approve oscar \(Self.app)", "config.update olga \(Self.app)",
            "proposal.create olga \(Self.app)", "proposal.refuse oscar \(Self.app)",
        ], "\(seen.joined(separator: "\n"))")
        // A filter by action finds the change whichever way it was made: here, approved.
        #expect(try Self.rows(app, token: admin, query: "action=config.update").count == 2)
        #expect(try Self.rows(app, token: admin, query: "actor=oscar").count == 2)
    }

    @Test func anAppScopedAdminReadsTheRowsOfItsAppsOnly() throws {
        let app = try TestApplication()
        _ = try app.addApp(Self.app)
        _ = try app.addApp("com.example.chat")
        let admin = try app.addToken(role: "admin", name: "alice")
        for target in [Self.app, "com.example.chat"] {
            #expect(try app.client.request("PATCH", "/v1/admin/apps/\(target)/config", token: admin, body: Array(#"{"test_crash": true}"#.utf8)).status == 200)
        }
        let chatAdmin = try app.addToken(role: "admin", name: "chat-lead", apps: ["com.example.chat"])
        let rows = try Self.rows(app, token: chatAdmin)
        #expect(rows.map { $0["app"] as? String } == ["com.example.chat"], "\(rows)")
        #expect(try app.client.request("GET", "/v1/admin/audit?app=\(Self.app)", token: chatAdmin).status == 404)
        #expect(try app.client.request("GET", "/v1/admin/audit", token: try app.addToken(role: "operator")).status == 403)
    }

    @Test func auditRowsOlderThanTheirRetentionArePrunedAndYoungerOnesStay() throws {
        let app = try TestApplication()
        _ = try app.addApp(Self.app)
        let admin = try app.addToken(role: "admin", name: "alice")
        #expect(try app.client.request("PATCH", "\(Self.base)/config", token: admin, body: Array(#"{"test_crash": true}"#.utf8)).status == 200)
        app.clock.advance(milliseconds: 2 * 86_400_000)
        #expect(try app.client.request("PATCH", "\(Self.base)/config", token: admin, body: Array(#"{"test_crash": false}"#.utf8)).status == 200)
        #expect(try app.store.pruneAudit(before: app.clock.now - 86_400_000) == 1)
        #expect(try Self.rows(app, token: admin).count == 1)
    }
}
