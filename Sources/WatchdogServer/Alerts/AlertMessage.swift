import Foundation
import WatchdogStore
import WatchdogWire

/// The JSON body of a webhook delivery (docs/api-alerts.md, "Alerts"). `text` is a sentence a person
/// reads — a Slack incoming webhook posts it as is — and `alert` the same in fields.
struct AlertPayload: Encodable {
    var text: String
    /// `alert`, or `test` for the "send test" button.
    var event: String
    var alert: AlertBody
}

/// The fields of an alert. Those of other conditions are left out.
struct AlertBody: Encodable {
    struct Reference: Encodable {
        var id: String
        var name: String
    }

    /// One new issue of a `new_issue` alert.
    struct Issue: Encodable {
        var fingerprint: String
        var title: String
        var affectedSessions: Int
        var reports: Int

        enum CodingKeys: String, CodingKey {
            case fingerprint, title, reports
            case affectedSessions = "affected_sessions"
        }
    }

    /// The idempotency key, also in the `Watchdog-Delivery` header: the same on every attempt.
    var id: String
    var app: String
    var condition: String
    var createdAt: String
    var rule: Reference?
    var hook: Reference
    var release: String?
    var releaseID: String?
    var sessions: Int?
    /// `release_regressed`: the predecessor it was compared against, the kind (absent: all
    /// kinds), and the comparison as `compare` gives it.
    var base: String?
    var kind: String?
    var comparison: SessionComparison?
    var issues: [Issue]?
    var testCrashes: Int?
    var glitchFreeSessionRate: Double?
    var glitchFreeUpperBound: Double?
    var threshold: Double?
    /// `attested` when the rule read the sessions of attested installs only (absent otherwise).
    var installs: String?
    /// `rollout_rolled_back`, `rollout_completed`: the rollout as `GET …/rollouts/{rule}` shows it.
    var rollout: JSONValue?
    /// `issue_regressed`: the issue's triage (who resolved it, in which release, the note).
    var triage: TriageView?

    enum CodingKeys: String, CodingKey {
        case id, app, condition, rule, hook, release, sessions, base, kind, comparison, issues, threshold, rollout, installs, triage
        case createdAt = "created_at"
        case releaseID = "release_id"
        case testCrashes = "test_crashes"
        case glitchFreeSessionRate = "glitch_free_session_rate"
        case glitchFreeUpperBound = "glitch_free_upper_bound"
    }
}

/// Turns findings into alerts, each with its one delivery: one alert per rule and release, the
/// new issues a pass found in a release together (a release with forty new issues is one
/// message, not forty).
enum AlertMessage {
    /// Issues named in one alert's text; the body lists up to `issuesListed`.
    static let issuesInText = 10
    static let issuesListed = 100

    static func alerts(_ findings: [AlertEvaluator.Finding], hooks: [String: AlertHookRecord], app: String, now: Int64) -> [NewAlert] {
        var groups: [[AlertEvaluator.Finding]] = []
        var issueGroups: [String: Int] = [:]
        for finding in findings {
            if case .newIssue = finding.detail {
                let key = "\(finding.rule.id) \(finding.release.release.id)"
                if let index = issueGroups[key] { groups[index].append(finding); continue }
                issueGroups[key] = groups.count
            }
            groups.append([finding])
        }
        return groups.compactMap { group in
            guard let first = group.first, let hook = hooks[first.rule.hookID] else { return nil }
            let id = UUID().uuidString.lowercased()
            let payload = payload(group, id: id, hook: hook, app: app, now: now)
            let body = (try? JSONBody.encode(payload)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            let firings = group.map { AlertFiringRecord(ruleID: $0.rule.id, subject: $0.subject, release: $0.release.release, alertID: id, firedAt: now) }
            return NewAlert(firings: firings, delivery: AlertDeliveryRecord(alertID: id, hookID: hook.id, app: app, ruleID: first.rule.id, event: "alert",
                                                                            body: body, createdAt: now, nextAttemptAt: now))
        }
    }

    /// The alert of a rollout that ended (`rollout_rolled_back`, `rollout_completed`), or that
    /// the guard paused (`rollout_paused`), for one rule: its firing's subject is the rollout
    /// (rule and start; a pause, its time too), so it is stored once.
    static func rollout(_ rollout: Rollout, view: JSONValue?, rule: AlertRuleRecord, hook: AlertHookRecord, now: Int64) -> NewAlert {
        let id = UUID().uuidString.lowercased()
        let last = rollout.history.last
        let what = "rule \(code(rollout.rule))"
        let text = switch rollout.status {
        case .rolledBack:
            "Watchdog: the guarded rollout of \(what) in \(rollout.app) was rolled back from \(RolloutMachine.percent(last?.fromPercent ?? 0)) to 0 %: \(last?.reason ?? "")"
        case .paused:
            "Watchdog: the guard paused the rollout of \(what) in \(rollout.app) at \(RolloutMachine.percent(rollout.percent)) — a person decides: \(last?.reason ?? "")"
        default:
            "Watchdog: the guarded rollout of \(what) in \(rollout.app) reached \(RolloutMachine.percent(rollout.percent)) and is complete."
        }
        var body = AlertBody(id: id, app: rollout.app, condition: rule.condition, createdAt: Timestamp.format(milliseconds: now),
                             rule: .init(id: rule.id, name: rule.name), hook: .init(id: hook.id, name: hook.name))
        body.rollout = view
        let payload = AlertPayload(text: slackEscaped(cut(text, to: 2_000) + " Rule: \(rule.name)."), event: "alert", alert: body)
        let encoded = (try? JSONBody.encode(payload)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        var subject = "rollout \(rollout.rule) \(rollout.startedAt)"
        if rollout.status == .paused { subject += " paused \(last?.at ?? now)" }
        let firing = AlertFiringRecord(ruleID: rule.id, subject: subject, release: ReleaseID(version: "rollout", build: rollout.rule),
                                       alertID: id, firedAt: now)
        return NewAlert(firings: [firing], delivery: AlertDeliveryRecord(alertID: id, hookID: hook.id, app: rollout.app, ruleID: rule.id, event: "alert",
                                                                         body: encoded, createdAt: now, nextAttemptAt: now))
    }

    /// The delivery of the "send test" button: a fresh id, like an alert's.
    static func test(hook: AlertHookRecord, by actor: String, now: Int64) -> AlertDeliveryRecord {
        let id = UUID().uuidString.lowercased()
        let payload = AlertPayload(
            text: slackEscaped("Watchdog: test alert for \(hook.app), sent by \(actor) to webhook \(hook.name). Real alerts look like this."),
            event: "test",
            alert: AlertBody(id: id, app: hook.app, condition: "test", createdAt: Timestamp.format(milliseconds: now), hook: .init(id: hook.id, name: hook.name)))
        let body = (try? JSONBody.encode(payload)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return AlertDeliveryRecord(alertID: id, hookID: hook.id, app: hook.app, ruleID: nil, event: "test", body: body, createdAt: now, nextAttemptAt: now)
    }

    private static func payload(_ group: [AlertEvaluator.Finding], id: String, hook: AlertHookRecord, app: String, now: Int64) -> AlertPayload {
        let first = group[0], rule = first.rule, release = first.release
        var body = AlertBody(id: id, app: app, condition: rule.condition, createdAt: Timestamp.format(milliseconds: now),
                             rule: .init(id: rule.id, name: rule.name), hook: .init(id: hook.id, name: hook.name),
                             release: release.release.text, releaseID: release.release.id, sessions: release.sessions)
        var subject = "\(app) \(code(release.release.text))"
        if rule.attestedOnly {
            body.installs = rule.installs
            subject += " (attested installs)"
        }
        var text: String
        switch first.detail {
        case .regressed(let base, let comparison):
            body.base = base.release.text
            body.kind = rule.kind
            body.comparison = comparison
            let what = rule.kind.map { "sessions with \(code($0))" } ?? "sessions with a keyboard glitch"
            let targetRate = percent(comparison.target.affectedSessionRate ?? 0), baseRate = percent(comparison.base.affectedSessionRate ?? 0)
            if let ratio = comparison.ratio, let interval = comparison.interval {
                let upper = interval.upper.map { times($0) } ?? "∞"
                text = "Watchdog: \(subject) regressed against \(code(base.release.text)): \(times(ratio)) the share of \(what) "
                    + "(95 % interval \(times(interval.lower))–\(upper)), \(targetRate) of \(number(comparison.target.sessions)) sessions against \(baseRate) of \(number(comparison.base.sessions))."
            } else {
                text = "Watchdog: \(subject) regressed against \(code(base.release.text)): \(what) in \(targetRate) of \(number(comparison.target.sessions)) sessions, "
                    + "none of \(number(comparison.base.sessions)) before."
            }
            if comparison.verdict == "unreliable" {
                text += " Unreliable: \(comparison.reason ?? "its sessions are concentrated") — look at who sent them before acting."
            }
        case .newIssue:
            let issues: [IssueView] = group.compactMap { if case .newIssue(let issue) = $0.detail { issue } else { nil } }
                .sorted { ($0.affectedSessions, $1.fingerprint) > ($1.affectedSessions, $0.fingerprint) }
            body.issues = issues.prefix(issuesListed).map { AlertBody.Issue(fingerprint: $0.fingerprint, title: $0.title, affectedSessions: $0.affectedSessions, reports: $0.reports) }
            let named = issues.prefix(issuesInText).map { "\(code($0.title)) (\(number($0.affectedSessions)) sessions)" }.joined(separator: "; ")
            let more = issues.count > issuesInText ? "; and \(issues.count - issuesInText) more" : ""
            text = issues.count == 1
                ? "Watchdog: new issue in \(subject): \(code(issues[0].title)) — \(number(issues[0].affectedSessions)) sessions affected of \(number(release.sessions))."
                : "Watchdog: \(issues.count) new issues in \(subject): \(named)\(more)."
        case .issueRegressed(let triage):
            body.triage = triage
            let by = triage.changedBy.isEmpty ? "" : " by \(code(triage.changedBy))"
            text = "Watchdog: issue \(triage.fingerprint) of \(app), resolved in \(code(triage.resolvedIn ?? "?"))\(by), is back in \(subject)."
        case .testCrashes(let count):
            body.testCrashes = count
            text = "Watchdog: test crashes are arriving from \(subject): \(number(count)) so far."
        case .glitchFree(let rate, let upperBound, let threshold, let sessions):
            body.sessions = sessions
            body.glitchFreeSessionRate = rate
            body.glitchFreeUpperBound = upperBound
            body.threshold = threshold
            text = "Watchdog: \(subject) has \(percent(rate)) glitch-free sessions of \(number(sessions)) (at most \(percent(upperBound)) with 95 % confidence), "
                + "below the rule's \(percent(threshold))."
        }
        return AlertPayload(text: slackEscaped(text + " Rule: \(rule.name)."), event: "alert", alert: body)
    }

    /// Client text longer than this is cut (with `…`) in the sentence; the fields keep it whole.
    static let clientTextInSentence = 120

    /// Text a client sent (a release's version and build, an issue's title: its kind and
    /// screen) as a code span: Slack shows it as typed, so a URL in it is not a link and
    /// `*bold*`, `_`, `~`, `@here` format or ping nothing. A backtick in it would end the span,
    /// so it becomes `ˋ` (U+02CB); line breaks and other control characters become spaces.
    /// `slackEscaped` then escapes `&`, `<` and `>` in the whole sentence, spans included.
    static func code(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars.prefix(clientTextInSentence) {
            switch scalar {
            case "`": scalars.append("\u{02CB}")
            case _ where scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .lineSeparator
                || scalar.properties.generalCategory == .paragraphSeparator: scalars.append(" ")
            default: scalars.append(scalar)
            }
        }
        let cut = text.unicodeScalars.count > clientTextInSentence ? "…" : ""
        return "`" + String(scalars) + cut + "`"
    }

    /// `text` at most `limit` characters (then ending in `…`), a code span it cut through
    /// closed: client text past the cut must not run on outside a span.
    static func cut(_ text: String, to limit: Int) -> String {
        guard text.count > limit else { return text }
        var kept = String(text.prefix(limit - 2))
        if kept.filter({ $0 == "`" }).count % 2 == 1 { kept += "`" }
        return kept + "…"
    }

    /// Slack reads `<…>` as links and mentions (`<!channel>`) and `&` as an entity: text a client
    /// sent (a release, a screen name) must not ping a channel, so the three are escaped as
    /// Slack's message formatting asks. Other receivers read the fields.
    static func slackEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    private static func percent(_ rate: Double) -> String { String(format: "%.1f %%", rate * 100) }
    private static func times(_ ratio: Double) -> String { String(format: "%.2f×", ratio) }
    private static func number(_ value: Int) -> String {
        let digits = String(value)
        guard digits.count > 3 else { return digits }
        var groups: [Substring] = []
        var end = digits.endIndex
        while end > digits.startIndex {
            let start = digits.index(end, offsetBy: -3, limitedBy: digits.startIndex) ?? digits.startIndex
            groups.insert(digits[start..<end], at: 0)
            end = start
        }
        return groups.joined(separator: ",")
    }
}
