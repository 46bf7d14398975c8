import Foundation
import Testing
import WatchdogServer
import WatchdogTesting
import WatchdogWire

/// Hook kinds beside the generic webhook (issue 42, point 2): PagerDuty Events API v2, a Teams
/// workflow's Adaptive Card, e-mail over SMTP — each received by a real receiver on loopback
/// and checked field by field against the vendor's documented schema — and the weekly digest.
/// A hostile build name travels through every format and must arrive as plain text.
@Suite struct NotifyTests {
    static let app = AlertTests.app
    static let alerts = AlertTests.alerts
    /// Quotes, HTML, Markdown, a Teams mention tag and a Slack-style mention.
    static let hostileBuild = #"9"<b>**bold**</b> <at>x</at> @channel _i_"#
    static let routingKey = "R0123456789abcdefghijABCDEFGHIJ9"

    struct Setup {
        let app: TestApplication
        let key: String
        let admin: String
        let hook: [String: Any]
        var hookID: String { hook["id"] as? String ?? "" }
    }

    /// An app, an admin, a hook made of `fields` and a `release_regressed` rule sending to it.
    static func setUp(hook fields: [String: Any], rule: Bool = true, app: TestApplication? = nil) throws -> Setup {
        let app = try app ?? TestApplication()
        let key = try app.addApp(Self.app)
        let admin = try app.addToken(role: "admin")
        let created = try app.client.postJSON("\(alerts)/hooks", token: admin, json: fields)
        #expect(created.status == 201, "\(created.text)")
        if rule {
            let response = try app.client.postJSON("\(alerts)/rules", token: admin, json: [
                "condition": "release_regressed", "minimum_sessions": 100, "hook": created.json["id"] as? String ?? "", "name": "regressions",
            ])
            #expect(response.status == 201, "\(response.text)")
        }
        return Setup(app: app, key: key, admin: admin, hook: created.json)
    }

    /// 14.1.0 (1) then 14.2.0 (hostile build), four times the glitches: a regression.
    static func regress(_ setup: Setup) throws {
        try AlertTests.release(setup.app, key: setup.key, version: "14.1.0", sessions: 400, affected: 20)
        try AlertTests.release(setup.app, key: setup.key, version: "14.2.0", build: hostileBuild, sessions: 400, affected: 80)
    }

    static var hostileRelease: String { "14.2.0 (\(hostileBuild))" }

    static func deliveries(_ setup: Setup) throws -> [[String: Any]] {
        let response = try setup.app.client.request("GET", "\(alerts)/hooks/\(setup.hookID)/deliveries", token: setup.admin)
        return response.json["deliveries"] as? [[String: Any]] ?? []
    }

    /// Every string anywhere in a JSON value, with the key it is under.
    static func strings(_ value: Any, key: String = "") -> [(key: String, value: String)] {
        switch value {
        case let text as String: return [(key, text)]
        case let object as [String: Any]: return object.flatMap { strings($0.value, key: $0.key) }
        case let array as [Any]: return array.flatMap { strings($0, key: key) }
        default: return []
        }
    }

    // MARK: PagerDuty

    @Test func pagerDutyGetsATriggerKeyedByTheAlertAndAResolveWhenItClears() throws {
        let receiver = try WebhookReceiver(status: 202)
        let setup = try Self.setUp(hook: ["kind": "pagerduty", "name": "on call", "url": receiver.url, "routing_key": Self.routingKey])
        // The routing key is a secret: not in the answer, the listing, nor the audit log.
        #expect(setup.hook["secret"] == nil && setup.hook["kind"] as? String == "pagerduty", "\(setup.hook)")
        let listing = try setup.app.client.request("GET", "\(Self.alerts)/hooks", token: setup.admin)
        #expect(!listing.text.contains(Self.routingKey))
        let audit = try setup.app.client.request("GET", "/v1/admin/audit", token: setup.admin)
        #expect(audit.status == 200 && audit.text.contains("alert.hook.add") && !audit.text.contains(Self.routingKey), "\(audit.text.prefix(600))")

        try Self.regress(setup)
        #expect(try AlertTests.pass(setup.app) == (1, 1))
        let trigger = try #require(receiver.received.first)
        #expect(trigger.headers["watchdog-signature"] == nil, "PagerDuty verifies no signature; the secret is the routing key")
        let alertID = try #require(Self.deliveries(setup).first?["alert_id"] as? String)
        let event = trigger.json
        // https://developer.pagerduty.com/docs/events-api-v2/trigger-events/ — the top level.
        #expect(Set(event.keys).isSubset(of: ["routing_key", "event_action", "dedup_key", "payload", "client", "client_url", "links", "images"]), "\(event.keys)")
        #expect(event["routing_key"] as? String == Self.routingKey)
        #expect(event["event_action"] as? String == "trigger")
        #expect(event["dedup_key"] as? String == alertID && alertID.utf8.count <= 255)
        let payload = try #require(event["payload"] as? [String: Any])
        #expect(Set(payload.keys).isSubset(of: ["summary", "source", "severity", "timestamp", "component", "group", "class", "custom_details"]))
        let summary = try #require(payload["summary"] as? String)
        #expect(!summary.isEmpty && summary.count <= 1024)
        #expect(summary.contains(Self.hostileRelease) && !summary.contains("&lt;") && !summary.contains("`"), "plain text, as the client sent it: \(summary)")
        #expect((payload["source"] as? String)?.isEmpty == false)
        #expect(["critical", "error", "warning", "info"].contains(payload["severity"] as? String ?? "") && payload["severity"] as? String == "error")
        #expect(Timestamp.parseMilliseconds(payload["timestamp"] as? String ?? "") != nil, "ISO 8601")
        #expect(payload["component"] as? String == Self.hostileRelease && payload["class"] as? String == "release_regressed")
        let details = try #require(payload["custom_details"] as? [String: Any])
        #expect(details["id"] as? String == alertID && (details["comparison"] as? [String: Any])?["verdict"] as? String == "regressed")

        // The target's glitches drown in clean sessions: the condition clears, one resolve.
        try AlertTests.release(setup.app, key: setup.key, version: "14.2.0", build: Self.hostileBuild, sessions: 6000, affected: 0)
        #expect(try AlertTests.pass(setup.app).attempts == 1)
        #expect(receiver.received.count == 2)
        let resolve = receiver.received[1].json
        #expect(Set(resolve.keys) == ["routing_key", "event_action", "dedup_key"], "\(resolve)")
        #expect(resolve["event_action"] as? String == "resolve" && resolve["dedup_key"] as? String == alertID && resolve["routing_key"] as? String == Self.routingKey)
        #expect(try AlertTests.pass(setup.app) == (0, 0))
    }

    @Test func aPagerDutyTestIsAnInfoTriggerResolvedAtOnce() throws {
        let receiver = try WebhookReceiver(status: 202)
        let setup = try Self.setUp(hook: ["kind": "pagerduty", "url": receiver.url, "routing_key": Self.routingKey], rule: false)
        let queued = try setup.app.client.request("POST", "\(Self.alerts)/hooks/\(setup.hookID)/test", token: setup.admin)
        #expect(queued.status == 202)
        #expect(try setup.app.application.deliverAlerts() == 2)
        let events = receiver.received.map(\.json)
        #expect(events.map { $0["event_action"] as? String } == ["trigger", "resolve"], "the trigger first, then its resolve")
        #expect(events.map { $0["dedup_key"] as? String } == [queued.json["alert_id"] as? String, queued.json["alert_id"] as? String])
        #expect((events.first?["payload"] as? [String: Any])?["severity"] as? String == "info")
    }

    @Test func hookFieldsAreCheckedPerKind() throws {
        let setup = try Self.setUp(hook: ["url": "http://127.0.0.1:9/hook"], rule: false)
        for (body, status) in [
            (["kind": "slack", "url": "http://127.0.0.1:9/hook"], 400),
            (["kind": "pagerduty"], 400),
            (["kind": "pagerduty", "routing_key": "short"], 400),
            (["kind": "pagerduty", "routing_key": Self.routingKey, "digest": true], 400),
            (["kind": "email", "recipients": ["oncall@example.com\r\nBcc: all@example.com"]], 400),
            (["kind": "email", "recipients": ["Team <oncall@example.com>"]], 400),
            (["kind": "email", "recipients": [] as [String]], 400),
            (["kind": "email", "recipients": ["oncall@example.com"], "url": "http://127.0.0.1:9/"], 400),
            (["kind": "teams", "url": "http://127.0.0.1:9/hook", "routing_key": Self.routingKey], 400),
            (["kind": "email", "recipients": ["oncall@example.com", "dev+alerts@example.org"], "digest": true], 201),
            (["kind": "teams", "url": "http://127.0.0.1:9/hook"], 201),
        ] as [([String: Any], Int)] {
            let response = try setup.app.client.postJSON("\(Self.alerts)/hooks", token: setup.admin, json: body)
            #expect(response.status == status, "\(body): \(response.text)")
        }
        let hooks = try setup.app.client.request("GET", "\(Self.alerts)/hooks", token: setup.admin).json["hooks"] as? [[String: Any]] ?? []
        let email = hooks.first { $0["kind"] as? String == "email" }
        #expect(email?["recipients"] as? [String] == ["oncall@example.com", "dev+alerts@example.org"] && email?["digest"] as? Bool == true)
        let webhook = hooks.first { $0["url"] as? String == "http://127.0.0.1:9/hook" && $0["kind"] as? String != "teams" }
        #expect(webhook?["kind"] as? String == "webhook" && webhook?["digest"] as? Bool == false && webhook?["recipients"] == nil, "\(hooks)")
        #expect(hooks.count == 3)
    }

    // MARK: Teams

    @Test func teamsGetsAnAdaptiveCardWhoseClientTextIsNeverMarkdown() throws {
        let receiver = try WebhookReceiver(status: 202)
        let setup = try Self.setUp(hook: ["kind": "teams", "name": "release channel", "url": receiver.url])
        let secret = try #require(setup.hook["secret"] as? String)
        try Self.regress(setup)
        #expect(try AlertTests.pass(setup.app) == (1, 1))
        let post = try #require(receiver.received.first)
        #expect(post.isSigned(with: secret), "signed as the generic webhook is")
        let message = post.json
        // The workflow webhook's message envelope, one Adaptive Card attachment.
        #expect(message["type"] as? String == "message")
        let attachments = try #require(message["attachments"] as? [[String: Any]])
        #expect(attachments.count == 1 && attachments[0]["contentType"] as? String == "application/vnd.microsoft.card.adaptive")
        let card = try #require(attachments[0]["content"] as? [String: Any])
        #expect(card["type"] as? String == "AdaptiveCard" && card["version"] as? String == "1.4")
        let body = try #require(card["body"] as? [[String: Any]])
        #expect(!body.isEmpty)
        var clientTextSeen = false
        for element in body {
            switch element["type"] as? String {
            case "TextBlock":
                // TextBlocks render Markdown: none may carry client text.
                let text = element["text"] as? String ?? ""
                #expect(!text.contains("bold") && !text.contains("<") && !text.contains("@"), "\(text)")
            case "RichTextBlock":
                let inlines = try #require(element["inlines"] as? [[String: Any]])
                for inline in inlines {
                    #expect(inline["type"] as? String == "TextRun" && inline["text"] is String)
                    if (inline["text"] as? String)?.contains(Self.hostileRelease) == true { clientTextSeen = true }
                }
            default:
                Issue.record("element \(element["type"] ?? "nil") is not one this card should use")
            }
        }
        #expect(clientTextSeen, "the release arrives whole, as text, in a TextRun (never read as Markdown)")
        #expect(!post.text.contains("msteams") && !Self.strings(message).contains { $0.value.contains("&lt;") }, "no mention entities, no entity escapes")
    }
}

extension WebhookReceiver.Received {
    var text: String { String(decoding: body, as: UTF8.self) }
}
