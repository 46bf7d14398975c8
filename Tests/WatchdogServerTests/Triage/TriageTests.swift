import Foundation
import Testing
import WatchdogServer
import WatchdogTesting

/// Triage of issues (issue 42, point 1): resolve, mute, reopen by an operator with a note,
/// audited; a resolved issue seen in a later *listed* release is `regressed` and fires one
/// `issue_regressed` delivery to a real receiver on loopback; a mute silences it until it ends.
@Suite struct TriageTests {
    static let issues = "/v1/apps/com.example.mail/issues"

    struct Setup {
        let alerts: AlertTests.Setup
        let operatorToken: String
        let fingerprint: String
        var app: TestApplication { alerts.app }
        var key: String { alerts.key }
    }

    /// An app under strict admission (only declared releases are listed; every test install is
    /// on loopback, so no limit of new installs per network) with 1.0 and 1.1
    /// declared, an `issue_regressed` rule, and an issue seen in 1.0.
    static func setUp(_ receiver: WebhookReceiver) throws -> Setup {
        let alerts = try AlertTests.setUp(receiver, rules: [["condition": "issue_regressed", "name": "back again"]])
        let app = alerts.app
        #expect(try app.client.request("PUT", "/v1/admin/apps/com.example.mail/admission", token: alerts.admin, body: Array(#"{"mode": "strict", "new_installs_per_network_per_hour": 0}"#.utf8)).status == 200)
        for version in ["1.0", "1.1"] {
            let declared = try app.client.postJSON("/v1/admin/apps/com.example.mail/releases", token: alerts.admin, json: ["version": version, "build": "1"])
            #expect(declared.status == 201, "\(declared.text)")
        }
        try AlertTests.release(app, key: alerts.key, version: "1.0", sessions: 20, affected: 5)
        let listed = try app.client.request("GET", "\(issues)?release=1.0", token: alerts.admin)
        let fingerprint = try #require((listed.json["issues"] as? [[String: Any]])?.first?["fingerprint"] as? String, "\(listed.text)")
        let operatorToken = try app.addToken(role: "operator", name: "alice")
        return Setup(alerts: alerts, operatorToken: operatorToken, fingerprint: fingerprint)
    }

    static func act(_ setup: Setup, _ action: String, _ body: [String: Any] = [:], token: String? = nil) throws -> TestResponse {
        try setup.app.client.postJSON("\(issues)/\(setup.fingerprint)/\(action)", token: token ?? setup.operatorToken, json: body)
    }

    /// The issue's state in the list of `release`.
    static func state(_ setup: Setup, release: String) throws -> String? {
        let listed = try setup.app.client.request("GET", "\(issues)?release=\(release)", token: setup.alerts.admin)
        return (listed.json["issues"] as? [[String: Any]])?.first { $0["fingerprint"] as? String == setup.fingerprint }?["state"] as? String
    }

    @Test func aResolvedIssueSeenInALaterListedReleaseRegressesAndAlertsOnceButAForgedReleaseDoesNothing() throws {
        let receiver = try WebhookReceiver()
        let setup = try Self.setUp(receiver)
        #expect(try Self.state(setup, release: "1.0") == "open")
        let resolved = try Self.act(setup, "resolve", ["note": "fixed by the new layout"])
        #expect(resolved.status == 200, "\(resolved.text)")
        #expect(resolved.json["state"] as? String == "resolved" && resolved.json["resolved_in"] as? String == "1.0 (1)")
        #expect(resolved.json["changed_by"] as? String == "alice" && resolved.json["note"] as? String == "fixed by the new layout")
        #expect(try AlertTests.pass(setup.app) == (0, 0))

        // The ingest key is public: a release nobody declared stays unlisted and regresses nothing.
        try AlertTests.release(setup.app, key: setup.key, version: "9.9", sessions: 20, affected: 10)
        #expect(try AlertTests.pass(setup.app) == (0, 0))
        #expect(try Self.state(setup, release: "1.0") == "resolved")
        #expect(receiver.received.isEmpty)

        // Seen again in 1.1, declared after 1.0: regressed, one delivery.
        try AlertTests.release(setup.app, key: setup.key, version: "1.1", sessions: 20, affected: 3)
        #expect(try AlertTests.pass(setup.app) == (1, 1))
        #expect(receiver.received.count == 1)
        let alert = try #require(receiver.received.first)
        #expect(alert.isSigned(with: setup.alerts.secret))
        let body = try #require(alert.json["alert"] as? [String: Any])
        #expect(body["condition"] as? String == "issue_regressed" && body["release"] as? String == "1.1 (1)")
        let triage = try #require(body["triage"] as? [String: Any])
        #expect(triage["fingerprint"] as? String == setup.fingerprint && triage["regressed_in"] as? String == "1.1 (1)" && triage["resolved_in"] as? String == "1.0 (1)")
        #expect((alert.json["text"] as? String)?.contains("is back in") == true)
        #expect(try Self.state(setup, release: "1.1") == "regressed")
        let filtered = try setup.app.client.request("GET", "\(Self.issues)?release=1.1&state=regressed", token: setup.alerts.admin)
        #expect((filtered.json["issues"] as? [[String: Any]])?.map { $0["fingerprint"] as? String } == [setup.fingerprint])
        #expect(try setup.app.client.request("GET", "\(Self.issues)?release=1.1&state=resolved", token: setup.alerts.admin).json["issues"] as? [Any] != nil)
        #expect((try setup.app.client.request("GET", "\(Self.issues)?release=1.1&state=resolved", token: setup.alerts.admin).json["issues"] as? [Any])?.isEmpty == true)

        // More reports, more passes: still the one delivery.
        try AlertTests.release(setup.app, key: setup.key, version: "1.1", sessions: 20, affected: 4)
        #expect(try AlertTests.pass(setup.app) == (0, 0))
        #expect(try AlertTests.pass(setup.app) == (0, 0))
        #expect(receiver.received.count == 1)

        // Each change is an audit row by the person, named as a dotted action.
        let audit = try setup.app.client.request("GET", "/v1/admin/audit?action=issue.resolve", token: setup.alerts.admin)
        let rows = try #require(audit.json["entries"] as? [[String: Any]])
        #expect(rows.count == 1 && rows.first?["actor"] as? String == "alice" && rows.first?["app"] as? String == "com.example.mail")
        #expect(((rows.first?["after"] as? [String: Any])?["state"]) as? String == "resolved")

        // Reopened: open, and the alert's condition no longer holds.
        let reopened = try Self.act(setup, "reopen", ["note": "not fixed"])
        #expect(reopened.status == 200 && reopened.json["state"] as? String == "open")
        #expect(try Self.state(setup, release: "1.1") == "open")
    }

    @Test func aMuteSilencesARegressionUntilItEnds() throws {
        let receiver = try WebhookReceiver()
        let setup = try Self.setUp(receiver)
        #expect(try Self.act(setup, "resolve").status == 200)
        let muted = try Self.act(setup, "mute", ["hours": 1, "note": "known, on it"])
        #expect(muted.status == 200, "\(muted.text)")
        #expect(muted.json["state"] as? String == "muted" && muted.json["resolution"] as? String == "resolved")
        #expect(muted.json["muted_until"] as? String != nil)

        try AlertTests.release(setup.app, key: setup.key, version: "1.1", sessions: 20, affected: 3)
        #expect(try AlertTests.pass(setup.app) == (0, 0))
        #expect(try Self.state(setup, release: "1.1") == "muted")
        #expect(receiver.received.isEmpty)

        // The hour is over: the regression it hid is told, once.
        setup.app.clock.advance(seconds: 3601)
        #expect(try Self.state(setup, release: "1.1") == "regressed")
        #expect(try AlertTests.pass(setup.app) == (1, 1))
        #expect(try AlertTests.pass(setup.app) == (0, 0))
        #expect(receiver.received.count == 1)
    }

    @Test func aMuteForMoreAffectedSessionsEndsWhenThatManyMoreAreAffected() throws {
        let receiver = try WebhookReceiver()
        let setup = try Self.setUp(receiver)
        #expect(try Self.act(setup, "resolve").status == 200)
        let muted = try Self.act(setup, "mute", ["sessions": 5])
        #expect(muted.status == 200 && muted.json["muted_sessions_left"] as? Int == 5, "\(muted.text)")
        try AlertTests.release(setup.app, key: setup.key, version: "1.1", sessions: 20, affected: 4)
        #expect(try AlertTests.pass(setup.app) == (0, 0))
        #expect(try Self.state(setup, release: "1.1") == "muted")
        try AlertTests.release(setup.app, key: setup.key, version: "1.1", sessions: 5, affected: 1)
        #expect(try Self.state(setup, release: "1.1") == "regressed")
        #expect(try AlertTests.pass(setup.app) == (1, 1))
        #expect(receiver.received.count == 1)
    }

    @Test func triageNeedsAnOperatorAndRefusesWhatIsNotAnIssueOrNotText() throws {
        let receiver = try WebhookReceiver()
        let setup = try Self.setUp(receiver)
        let viewer = try setup.app.addToken(role: "viewer", name: "bob")
        #expect(try Self.act(setup, "resolve", token: viewer).status == 403)
        #expect(try Self.act(setup, "resolve", ["note": String(repeating: "x", count: 1001)]).status == 400)
        #expect(try Self.act(setup, "resolve", ["note": "bell \u{07}"]).status == 400)
        #expect(try Self.act(setup, "resolve", ["note": "two\nlines"]).status == 200)
        #expect(try Self.act(setup, "resolve", ["release": "9.9 (1)"]).status == 404, "an unlisted release is no anchor")
        #expect(try Self.act(setup, "resolve", ["release": "1.0 (1)", "next_release": true]).status == 400)
        #expect(try Self.act(setup, "mute").status == 400, "a mute needs an end")
        #expect(try Self.act(setup, "mute", ["hours": 0]).status == 400)
        #expect(try Self.act(setup, "mute", ["hours": 8785]).status == 400, "more than a year")
        #expect(try Self.act(setup, "mute", ["until": "2030-01-01T00:00:00Z"]).status == 400, "not a field")
        #expect(try Self.act(setup, "mute", ["sessions": 0]).status == 400)
        #expect(try Self.act(setup, "resolve", ["color": "red"]).status == 400)
        #expect(try Self.act(setup, "snooze").status == 404)
        let unknown = try setup.app.client.postJSON("\(Self.issues)/fp_0123456789abcdef/resolve", token: setup.operatorToken, json: [:])
        #expect(unknown.status == 404)
        let notAFingerprint = try setup.app.client.postJSON("\(Self.issues)/nope/resolve", token: setup.operatorToken, json: [:])
        #expect(notAFingerprint.status == 400)
        #expect(try setup.app.client.request("GET", "\(Self.issues)?state=maybe", token: viewer).status == 400)
    }
}
