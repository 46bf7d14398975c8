import Foundation
import Testing
import WatchdogServer
import WatchdogTesting

/// Alert rules and webhooks (issue 18), in memory over a real store, against a real loopback
/// receiver. The worker's passes run by hand (`evaluateAlerts`, `deliverAlerts`) and time is the
/// `TestClock`, so retries are reached by moving the clock, never by sleeping.
@Suite struct AlertTests {
    static let app = "com.example.mail"
    static let alerts = "/v1/admin/apps/com.example.mail/alerts"

    /// An app, an admin token, a hook on `receiver` and one rule; returns the hook's secret.
    struct Setup {
        let app: TestApplication
        let key: String
        let admin: String
        let secret: String
        let hook: String
    }

    static func setUp(_ receiver: WebhookReceiver, rules: [[String: Any]], app: TestApplication? = nil, admission: AdmissionSettings = .open) throws -> Setup {
        let app = try app ?? TestApplication()
        let key = try app.addApp(Self.app, admission: admission)
        let admin = try app.addToken(role: "admin")
        let created = try app.client.postJSON("\(alerts)/hooks", token: admin, json: ["name": "release channel", "url": receiver.url])
        #expect(created.status == 201, "\(created.text)")
        let secret = try #require(created.json["secret"] as? String)
        let hook = try #require(created.json["id"] as? String)
        for rule in rules {
            let response = try app.client.postJSON("\(alerts)/rules", token: admin, json: rule.merging(["hook": hook]) { $1 })
            #expect(response.status == 201, "\(response.text)")
        }
        return Setup(app: app, key: key, admin: admin, secret: secret, hook: hook)
    }

    /// `sessions` sessions of a release, the first `affected` of them with a view-frame glitch.
    static func release(_ app: TestApplication, key: String, version: String, build: String = "1", sessions: Int, affected: Int, screen: String? = nil) throws {
        let ids = try VerdictTests.sessions(app, key: key, version: version, build: build, count: sessions)
        var reports = try VerdictTests.reports(affected, in: affected, of: ids, version: version, build: build)
        if let screen { for index in reports.indices { reports[index]["screen"] = screen } }
        try VerdictTests.post(app, key: key, reports)
    }

    /// One pass of the worker: evaluate, then send what is due.
    @discardableResult
    static func pass(_ app: TestApplication) throws -> (alerts: Int, attempts: Int) {
        let alerts = try app.application.evaluateAlerts()
        return (alerts, try app.application.deliverAlerts())
    }

    static func deliveries(_ setup: Setup) throws -> [[String: Any]] {
        let response = try setup.app.client.request("GET", "\(alerts)/hooks/\(setup.hook)/deliveries", token: setup.admin)
        #expect(response.status == 200, "\(response.text)")
        return response.json["deliveries"] as? [[String: Any]] ?? []
    }

    @Test func aRegressionFiresExactlyOneAlertWithAValidSignature() throws {
        let receiver = try WebhookReceiver()
        let setup = try Self.setUp(receiver, rules: [["condition": "release_regressed", "minimum_sessions": 100, "name": "14.x regressions"]])
        try Self.release(setup.app, key: setup.key, version: "14.1.0", sessions: 400, affected: 20)
        try Self.release(setup.app, key: setup.key, version: "14.2.0", sessions: 400, affected: 80)
        #expect(try Self.pass(setup.app) == (1, 1))
        #expect(receiver.received.count == 1)
        let alert = try #require(receiver.received.first)
        #expect(alert.isSigned(with: setup.secret), "Watchdog-Signature is HMAC-SHA256 of timestamp.body under the hook's secret")
        #expect(!alert.isSigned(with: setup.secret + "x"))
        #expect(alert.headers["watchdog-event"] == "alert")
        let body = try #require(alert.json["alert"] as? [String: Any])
        #expect(alert.deliveryID == body["id"] as? String && alert.headers["idempotency-key"] == alert.deliveryID)
        #expect(body["condition"] as? String == "release_regressed" && body["release"] as? String == "14.2.0 (1)" && body["base"] as? String == "14.1.0 (1)")
        #expect((body["comparison"] as? [String: Any])?["verdict"] as? String == "regressed")
        let text = try #require(alert.json["text"] as? String)
        #expect(text.contains("`14.2.0 (1)` regressed against `14.1.0 (1)`") && text.contains("14.x regressions"), "\(text)")

        // Still regressed, more data: no second alert while the condition holds.
        try Self.release(setup.app, key: setup.key, version: "14.2.0", build: "1", sessions: 100, affected: 30)
        #expect(try Self.pass(setup.app) == (0, 0))
        #expect(try Self.pass(setup.app) == (0, 0))
        #expect(receiver.received.count == 1)
        let rules = try setup.app.client.request("GET", "\(Self.alerts)/rules", token: setup.admin).json["rules"] as? [[String: Any]]
        #expect((rules?.first?["firing"] as? [[String: Any]])?.first?["release"] as? String == "14.2.0 (1)")
        let log = try Self.deliveries(setup)
        #expect(log.count == 1 && log.first?["state"] as? String == "delivered" && log.first?["last_status"] as? Int == 200)
        #expect(log.first?["last_latency_ms"] is Int && log.first?["attempts"] as? Int == 1)
    }

    @Test func aReceiverDownForAWhileGetsTheAlertOnceWhenItIsBack() throws {
        // Nothing listens on the hook's port at first: connections are refused.
        let down = try WebhookReceiver()
        let port = down.port
        down.stop()
        let setup = try Self.setUp(down, rules: [["condition": "release_regressed"]])
        try Self.release(setup.app, key: setup.key, version: "14.1.0", sessions: 400, affected: 20)
        try Self.release(setup.app, key: setup.key, version: "14.2.0", sessions: 400, affected: 80)
        #expect(try Self.pass(setup.app) == (1, 1))
        var log = try #require(try Self.deliveries(setup).first)
        #expect(log["state"] as? String == "pending" && log["attempts"] as? Int == 1)
        #expect(log["last_status"] is NSNull && (log["last_error"] as? String)?.isEmpty == false, "\(log)")
        let alertID = try #require(log["alert_id"] as? String)

        // Not due again before its backoff (10 s, then 20 s…): nothing is sent.
        setup.app.clock.advance(seconds: 5)
        #expect(try setup.app.application.deliverAlerts() == 0)
        setup.app.clock.advance(seconds: 6)
        #expect(try setup.app.application.deliverAlerts() == 1)
        log = try #require(try Self.deliveries(setup).first)
        #expect(log["attempts"] as? Int == 2 && log["state"] as? String == "pending")

        // Back up, answering 503 first, then 200.
        let receiver = try WebhookReceiver(port: port, status: 503)
        setup.app.clock.advance(seconds: 21)
        #expect(try setup.app.application.deliverAlerts() == 1)
        log = try #require(try Self.deliveries(setup).first)
        #expect(log["last_status"] as? Int == 503 && (log["last_error"] as? String)?.hasPrefix("HTTP 503") == true, "\(log)")
        receiver.answer(200)
        setup.app.clock.advance(seconds: 41)
        #expect(try Self.pass(setup.app) == (0, 1))
        setup.app.clock.advance(seconds: 3600)
        #expect(try Self.pass(setup.app) == (0, 0), "delivered: never sent again")
        #expect(receiver.received.map(\.status) == [503, 200])
        #expect(Set(receiver.received.map(\.deliveryID)) == [alertID], "every attempt carries the alert's idempotency key")
        #expect(Set(receiver.received.map(\.body)).count == 1, "every attempt sends the same body")
        #expect(receiver.received.allSatisfy { $0.isSigned(with: setup.secret) })
        log = try #require(try Self.deliveries(setup).first)
        #expect(log["state"] as? String == "delivered" && log["attempts"] as? Int == 4)
    }

    @Test func sevenHundredReportsFromOneSessionFireNothing() throws {
        let receiver = try WebhookReceiver()
        let setup = try Self.setUp(receiver, rules: [
            ["condition": "release_regressed"],
            ["condition": "release_regressed", "kind": "view_frame_mismatch"],
            ["condition": "new_issue"],
            ["condition": "glitch_free_rate_below", "threshold": 0.7],
            ["condition": "test_crashes"],
        ])
        let target = try VerdictTests.demoLikeReleases(setup.app, key: setup.key)
        // The one issue is new in 14.1.0, the first release; 14.2.0 improved on it.
        #expect(try Self.pass(setup.app) == (1, 1))
        #expect((receiver.received.first?.json["alert"] as? [String: Any])?["release"] as? String == "14.1.0 (31102)")
        // A tester whose view flips every second: 700 reports of a new issue, one session.
        let flood = try (0..<700).map { _ -> [String: Any] in
            var report = try Fixtures.freshReport(version: "14.2.0", build: "31245", kind: "view_frame_mismatch", sessionID: target[1499])
            report["install_id"] = "I-14.2.0-1499"
            report["screen"] = "FloodViewController"
            return report
        }
        try VerdictTests.post(setup.app, key: setup.key, flood)
        #expect(try Self.pass(setup.app) == (0, 0))
        #expect(receiver.received.count == 1, "nothing after the flood")
    }

    @Test func aConditionThatClearsMayAlertAgain() throws {
        let receiver = try WebhookReceiver()
        let setup = try Self.setUp(receiver, rules: [["condition": "glitch_free_rate_below", "threshold": 0.9, "minimum_sessions": 100]])
        try Self.release(setup.app, key: setup.key, version: "2.0.0", sessions: 200, affected: 60)
        #expect(try Self.pass(setup.app) == (1, 1))
        let first = try #require(receiver.received.first?.json["alert"] as? [String: Any])
        #expect(first["condition"] as? String == "glitch_free_rate_below" && first["threshold"] as? Double == 0.9)
        #expect((first["glitch_free_upper_bound"] as? Double ?? 1) < 0.9)
        // 3,000 clean sessions: 98 % glitch-free, the condition clears.
        _ = try VerdictTests.sessions(setup.app, key: setup.key, version: "2.0.0", build: "1", count: 3000, startedAt: FixtureDay.reports.adding(days: 1).at(9))
        #expect(try Self.pass(setup.app) == (0, 0))
        let rules = try setup.app.client.request("GET", "\(Self.alerts)/rules", token: setup.admin).json["rules"] as? [[String: Any]]
        #expect((rules?.first?["firing"] as? [Any])?.isEmpty == true)
        // Then 1,500 sessions with a glitch: below again, a new alert.
        let ids = try VerdictTests.sessions(setup.app, key: setup.key, version: "2.0.0", build: "1", count: 1500, startedAt: FixtureDay.reports.adding(days: 2).at(9))
        try VerdictTests.post(setup.app, key: setup.key, try VerdictTests.reports(1500, in: 1500, of: ids, version: "2.0.0", build: "1"))
        #expect(try Self.pass(setup.app) == (1, 1))
        #expect(Set(receiver.received.compactMap(\.deliveryID)).count == 2)
    }

    @Test func newIssuesOfAReleaseAlertTogetherOnce() throws {
        let receiver = try WebhookReceiver()
        let setup = try Self.setUp(receiver, rules: [["condition": "new_issue", "minimum_affected_sessions": 5], ["condition": "test_crashes"]])
        try Self.release(setup.app, key: setup.key, version: "3.0.0", sessions: 50, affected: 10)
        try Self.release(setup.app, key: setup.key, version: "3.1.0", sessions: 50, affected: 10)
        try Self.release(setup.app, key: setup.key, version: "3.1.0", sessions: 50, affected: 6, screen: "SettingsViewController")
        try Self.release(setup.app, key: setup.key, version: "3.1.0", sessions: 50, affected: 7, screen: "InboxViewController")
        try Self.release(setup.app, key: setup.key, version: "3.1.0", sessions: 50, affected: 4, screen: "SearchViewController")
        // 3.0.0's issues were new in it: one alert for 3.0.0, one for 3.1.0's two issues above 5 sessions.
        #expect(try Self.pass(setup.app) == (2, 2))
        let bodies = receiver.received.compactMap { $0.json["alert"] as? [String: Any] }
        let newer = try #require(bodies.first { $0["release"] as? String == "3.1.0 (1)" })
        let screens = (newer["issues"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }
        #expect(screens.count == 2 && screens[0].contains("InboxViewController") && screens[1].contains("SettingsViewController"), "\(screens)")
        // A test crash appears: one alert; more of them: none.
        var crash = try Fixtures.freshReport(version: "3.1.0", build: "1")
        crash["action"] = ["auto_fixed": false, "test_crash": true]
        try VerdictTests.post(setup.app, key: setup.key, [crash])
        #expect(try Self.pass(setup.app) == (1, 1))
        #expect((receiver.received.last?.json["alert"] as? [String: Any])?["test_crashes"] as? Int == 1)
        crash["id"] = UUID().uuidString.lowercased()
        try VerdictTests.post(setup.app, key: setup.key, [crash])
        #expect(try Self.pass(setup.app) == (0, 0))
    }

    @Test func sendTestDeliversASignedTestAndLogsIt() throws {
        let receiver = try WebhookReceiver()
        let setup = try Self.setUp(receiver, rules: [])
        let queued = try setup.app.client.request("POST", "\(Self.alerts)/hooks/\(setup.hook)/test", token: setup.admin)
        #expect(queued.status == 202 && queued.json["state"] as? String == "pending", "\(queued.text)")
        #expect(receiver.received.isEmpty, "sent by the worker, not on the request's thread")
        #expect(try setup.app.application.deliverAlerts() == 1)
        let test = try #require(receiver.received.first)
        #expect(test.isSigned(with: setup.secret) && test.headers["watchdog-event"] == "test")
        #expect(test.deliveryID == queued.json["alert_id"] as? String)
        #expect((test.json["text"] as? String)?.contains("test alert") == true)
        let hooks = try setup.app.client.request("GET", "\(Self.alerts)/hooks", token: setup.admin)
        let hook = try #require((hooks.json["hooks"] as? [[String: Any]])?.first)
        #expect(hook["secret"] == nil && !hooks.text.contains(setup.secret), "the secret is shown once, at creation")
        let delivery = try #require((hook["deliveries"] as? [[String: Any]])?.first)
        #expect(delivery["event"] as? String == "test" && delivery["state"] as? String == "delivered" && delivery["last_status"] as? Int == 200)
    }

    @Test func rulesAndHooksAreCheckedAndOnlyAdminsManageThem() throws {
        let receiver = try WebhookReceiver()
        let setup = try Self.setUp(receiver, rules: [])
        let client = setup.app.client
        let viewer = try setup.app.addToken(role: "viewer")
        #expect(try client.request("GET", "\(Self.alerts)/rules", token: viewer).status == 403)
        #expect(try client.postJSON("\(Self.alerts)/hooks", token: viewer, json: ["url": receiver.url]).status == 403)
        func refused(_ path: String, _ body: [String: Any], code: String = "invalid_field", mentioning field: String) throws {
            let response = try client.postJSON("\(Self.alerts)/\(path)", token: setup.admin, json: body)
            #expect(response.status == 400 && response.errorCode == code && response.errorMessage?.contains(field) == true, "\(body): \(response.text)")
        }
        try refused("hooks", ["url": "ftp://example.com/x"], mentioning: "url")
        try refused("hooks", ["url": "javascript:alert(1)"], mentioning: "url")
        try refused("hooks", ["url": "https:///nohost"], mentioning: "url")
        try refused("hooks", ["url": "https://x.example/" + String(repeating: "a", count: 2100)], mentioning: "url")
        try refused("hooks", ["url": receiver.url, "secret": "mine"], mentioning: "secret")
        try refused("hooks", ["name": "x"], code: "invalid_shape", mentioning: "url")
        try refused("rules", ["condition": "sometimes", "hook": setup.hook], mentioning: "condition")
        try refused("rules", ["condition": "glitch_free_rate_below", "hook": setup.hook, "threshold": 1.5], mentioning: "threshold")
        try refused("rules", ["condition": "glitch_free_rate_below", "hook": setup.hook], mentioning: "threshold")
        try refused("rules", ["condition": "new_issue", "hook": setup.hook, "kind": "view_frame_mismatch"], mentioning: "kind")
        try refused("rules", ["condition": "new_issue", "hook": setup.hook, "minimum_affected_sessions": 0], mentioning: "minimum_affected_sessions")
        try refused("rules", ["condition": "release_regressed", "hook": setup.hook, "kind": "Nope"], mentioning: "kind")
        try refused("rules", ["condition": "release_regressed", "hook": setup.hook, "minimum_sessions": 2.5], mentioning: "minimum_sessions")
        let unknownHook = try client.postJSON("\(Self.alerts)/rules", token: setup.admin, json: ["condition": "release_regressed", "hook": "wh00000000"])
        #expect(unknownHook.status == 409 && unknownHook.errorCode == "unknown_hook" && unknownHook.errorMessage?.contains("wh00000000") == true)
        try refused("hooks", ["url": "http://user@example.com/"], mentioning: "url")
        try refused("hooks", ["url": "https://example.com:65536/"], mentioning: "url")
        try refused("hooks", ["url": receiver.url, "name": NSNull()], mentioning: "name")
        try refused("rules", ["condition": "release_regressed", "hook": setup.hook, "name": String(repeating: "n", count: 129)], mentioning: "name")
        #expect(try client.request("GET", "/v1/admin/apps/com.example.other/alerts/rules", token: setup.admin).status == 404)

        let rule = try client.postJSON("\(Self.alerts)/rules", token: setup.admin, json: ["condition": "test_crashes", "hook": setup.hook])
        let ruleID = try #require(rule.json["id"] as? String)
        #expect(rule.json["minimum_sessions"] is NSNull && rule.json["threshold"] is NSNull)
        let inUse = try client.request("DELETE", "\(Self.alerts)/hooks/\(setup.hook)", token: setup.admin)
        #expect(inUse.status == 409 && inUse.errorCode == "hook_in_use" && inUse.errorMessage?.contains(ruleID) == true)
        #expect(try client.request("DELETE", "\(Self.alerts)/rules/\(ruleID)", token: setup.admin).status == 204)
        #expect(try client.request("DELETE", "\(Self.alerts)/rules/\(ruleID)", token: setup.admin).status == 404)
        #expect(try client.request("DELETE", "\(Self.alerts)/hooks/\(setup.hook)", token: setup.admin).status == 204)
        #expect(try client.request("POST", "\(Self.alerts)/hooks/\(setup.hook)/test", token: setup.admin).status == 404)
    }

    @Test func clientTextCannotMentionASlackChannel() throws {
        let receiver = try WebhookReceiver()
        let setup = try Self.setUp(receiver, rules: [["condition": "new_issue", "minimum_affected_sessions": 1, "minimum_installs": 1]])
        try Self.release(setup.app, key: setup.key, version: "1.0.0", sessions: 3, affected: 2, screen: "<!channel> & <https://evil.example|click>")
        #expect(try Self.pass(setup.app) == (1, 1))
        let json = try #require(receiver.received.first?.json)
        let text = try #require(json["text"] as? String)
        #expect(!text.contains("<") && !text.contains(">") && text.contains("&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;"), "\(text)")
        let issue = ((json["alert"] as? [String: Any])?["issues"] as? [[String: Any]])?.first
        #expect((issue?["title"] as? String)?.contains("<!channel>") == true, "the fields keep the client's text as it was")
    }

    @Test func aHostOutsideTheAllowedHostsIsNeverConnectedTo() throws {
        let receiver = try WebhookReceiver()
        let app = try TestApplication { $0.alertAllowedHosts = ["127.0.0.1"] }
        let setup = try Self.setUp(receiver, rules: [], app: app)
        // Another loopback address, not in the list (nothing listens there either).
        let other = try setup.app.client.postJSON("\(Self.alerts)/hooks", token: setup.admin, json: ["url": "http://127.0.0.2:\(receiver.port)/hook"])
        let otherID = try #require(other.json["id"] as? String)
        #expect(try setup.app.client.request("POST", "\(Self.alerts)/hooks/\(otherID)/test", token: setup.admin).status == 202)
        #expect(try setup.app.client.request("POST", "\(Self.alerts)/hooks/\(setup.hook)/test", token: setup.admin).status == 202)
        #expect(try setup.app.application.deliverAlerts() == 1, "only the allowed host is tried")
        #expect(receiver.received.count == 1)
        let log = try setup.app.client.request("GET", "\(Self.alerts)/hooks/\(otherID)/deliveries", token: setup.admin).json["deliveries"] as? [[String: Any]]
        #expect(log?.first?["state"] as? String == "failed" && (log?.first?["last_error"] as? String)?.contains("--alert-allowed-hosts") == true, "\(log ?? [])")
    }
}
