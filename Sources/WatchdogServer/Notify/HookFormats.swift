import Foundation
import WatchdogStore

/// What one delivery becomes for its hook's kind. The outbox keeps the generic body (the
/// `webhook` kind's, docs/api-alerts.md "Alerts"); the other kinds' requests are made from it at each
/// attempt, the same bytes every time (nothing here reads the clock).
///
/// Client text (a release's version, an issue's title) stays text in every format: PagerDuty's
/// fields are plain text; a Teams card carries every sentence in `RichTextBlock` `TextRun`s,
/// which Adaptive Cards never read as Markdown (a `TextBlock` or a `FactSet` would), and a
/// mention needs an `msteams.entities` entry the card never has; an e-mail is `text/plain`
/// with its subject RFC 2047-encoded (`EmailMessage`).
enum HookFormats {
    enum Request {
        case post(body: [UInt8], signed: Bool)
        case mail(recipients: [String], message: [UInt8])
    }

    static func request(_ delivery: AlertDeliveryRecord, hook: AlertHookRecord, sender: String) -> Request {
        let generic = JSONValue.parse(Array(delivery.body.utf8)) ?? .object([:])
        switch HookKind(rawValue: hook.kind) ?? .webhook {
        case .webhook:
            return .post(body: Array(delivery.body.utf8), signed: true)
        case .pagerduty:
            return .post(body: encode(pagerDuty(generic, event: delivery.event, routingKey: hook.secret, app: delivery.app)), signed: false)
        case .teams:
            return .post(body: encode(teams(generic, event: delivery.event)), signed: true)
        case .email:
            let (subject, text) = mail(generic, event: delivery.event, app: delivery.app)
            let message = EmailMessage(from: sender, to: hook.recipients, subject: subject, text: text,
                                       messageID: "\(delivery.alertID).\(delivery.event)@watchdogd", date: delivery.createdAt,
                                       headers: [("Watchdog-Event", delivery.event), ("Watchdog-Delivery", delivery.alertID)])
            return .mail(recipients: hook.recipients, message: message.bytes())
        }
    }

    // MARK: PagerDuty Events API v2

    /// `trigger` for an alert (and the test), `resolve` when it cleared; `dedup_key` is the
    /// alert's id, so the resolve closes the incident the trigger opened.
    /// https://developer.pagerduty.com/docs/events-api-v2/trigger-events/
    static func pagerDuty(_ generic: JSONValue, event: String, routingKey: String, app: String) -> JSONValue {
        let alert = generic["alert"] ?? .object([:])
        let id = alert["id"]?.stringValue ?? ""
        if event == "resolve" {
            return .object(["routing_key": .string(routingKey), "event_action": .string("resolve"), "dedup_key": .string(id)])
        }
        let condition = alert["condition"]?.stringValue ?? event
        var payload: [String: JSONValue] = [
            // At most 1024 characters, as the schema says.
            "summary": .string(String(plain(generic["text"]?.stringValue ?? "Watchdog alert").prefix(1024))),
            "source": .string("watchdogd: \(app)"),
            "severity": .string(severity(condition)),
            "group": .string(app),
            "class": .string(condition),
            "custom_details": alert,
        ]
        if let created = alert["created_at"]?.stringValue { payload["timestamp"] = .string(created) }
        if let release = alert["release"]?.stringValue { payload["component"] = .string(release) }
        return .object([
            "routing_key": .string(routingKey), "event_action": .string("trigger"), "dedup_key": .string(id),
            "client": .string("Watchdog"), "payload": .object(payload),
        ])
    }

    static func severity(_ condition: String) -> String {
        switch condition {
        case "release_regressed", "glitch_free_rate_below", "rollout_rolled_back": "error"
        case "new_issue", "test_crashes", "rollout_paused": "warning"
        default: "info"
        }
    }

    // MARK: Teams (workflow webhook, Adaptive Card 1.4)

    /// https://learn.microsoft.com/en-us/microsoftteams/platform/task-modules-and-cards/cards/cards-reference#adaptive-card
    static func teams(_ generic: JSONValue, event: String) -> JSONValue {
        let alert = generic["alert"] ?? generic["digest"] ?? .object([:])
        var body: [JSONValue] = [
            // Our words only: the one TextBlock (Markdown) has no client text.
            .object(["type": .string("TextBlock"), "text": .string(title(event)), "weight": .string("Bolder"), "size": .string("Medium"), "wrap": .bool(true)]),
        ]
        for paragraph in plain(generic["text"]?.stringValue ?? "").split(separator: "\n", omittingEmptySubsequences: false) {
            body.append(.object(["type": .string("RichTextBlock"), "inlines": .array([.object(["type": .string("TextRun"), "text": .string(String(paragraph))])])]))
        }
        for (label, key) in [("App", "app"), ("Release", "release"), ("Condition", "condition"), ("Alert", "id")] {
            guard let value = alert[key]?.stringValue else { continue }
            body.append(.object(["type": .string("RichTextBlock"), "inlines": .array([
                .object(["type": .string("TextRun"), "text": .string("\(label): "), "weight": .string("Bolder")]),
                .object(["type": .string("TextRun"), "text": .string(value)]),
            ])]))
        }
        let card: JSONValue = .object([
            "$schema": .string("http://adaptivecards.io/schemas/adaptive-card.json"), "type": .string("AdaptiveCard"), "version": .string("1.4"),
            "body": .array(body),
        ])
        return .object(["type": .string("message"), "attachments": .array([
            .object(["contentType": .string("application/vnd.microsoft.card.adaptive"), "contentUrl": .null, "content": card]),
        ])])
    }

    static func title(_ event: String) -> String {
        switch event {
        case "test": "Watchdog: test alert"
        case "resolve": "Watchdog: alert cleared"
        case "digest": "Watchdog: weekly digest"
        default: "Watchdog alert"
        }
    }

    // MARK: E-mail

    static func mail(_ generic: JSONValue, event: String, app: String) -> (subject: String, text: String) {
        let alert = generic["alert"] ?? .object([:])
        let text = plain(generic["text"]?.stringValue ?? "")
        var subject = "\(title(event)) — \(app)"
        if let release = alert["release"]?.stringValue { subject += " \(release)" }
        if let condition = alert["condition"]?.stringValue, event == "alert" { subject += ": \(condition)" }
        var lines = [text, ""]
        for (label, key) in [("App", "app"), ("Release", "release"), ("Condition", "condition"), ("Rule", "rule"), ("Alert", "id")] {
            if let value = alert[key]?.stringValue ?? alert[key]?["name"]?.stringValue { lines.append("\(label): \(value)") }
        }
        return (subject, lines.joined(separator: "\n") + "\n")
    }

    // MARK: Text

    /// A generic body's `text` (Slack's formatting: `&`, `<`, `>` escaped, client text in
    /// backtick spans) as plain text: entities back to characters, spans in straight quotes.
    static func plain(_ slack: String) -> String {
        slack.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
            .replacingOccurrences(of: "`", with: "\"")
    }

    static func encode(_ value: JSONValue) -> [UInt8] {
        (try? JSONBody.encode(value)) ?? Array("{}".utf8)
    }
}

extension JSONValue {
    subscript(_ key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}
