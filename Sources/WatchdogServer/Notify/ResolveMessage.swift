import Foundation
import WatchdogStore
import WatchdogWire

extension AlertMessage {
    /// The `resolve` deliveries of alerts whose conditions all cleared, to the hooks that take
    /// them (`pagerduty`: its incident closes; a generic webhook gets no resolve, as before).
    /// An alert of several subjects (new issues of one release) resolves when its last clears.
    static func resolves(cleared: [AlertFiringRecord], firings: [AlertFiringRecord], rules: [AlertRuleRecord], hooks: [String: AlertHookRecord],
                         app: String, now: Int64) -> [NewAlert] {
        let clearedSet = Set(cleared)
        let stillFiring = Set(firings.filter { !clearedSet.contains($0) }.map(\.alertID))
        let rulesByID = Dictionary(rules.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var done: Set<String> = []
        var resolves: [NewAlert] = []
        for firing in cleared where !stillFiring.contains(firing.alertID) && done.insert(firing.alertID).inserted {
            guard let rule = rulesByID[firing.ruleID], let hook = hooks[rule.hookID], hook.kind == HookKind.pagerduty.rawValue else { continue }
            let payload = AlertPayload(
                text: slackEscaped("Watchdog: \(app) \(code(firing.release.text)) no longer meets rule \(rule.name) (\(rule.condition)); alert \(firing.alertID) cleared."),
                event: "resolve",
                alert: AlertBody(id: firing.alertID, app: app, condition: rule.condition, createdAt: Timestamp.format(milliseconds: now),
                                 rule: .init(id: rule.id, name: rule.name), hook: .init(id: hook.id, name: hook.name),
                                 release: firing.release.text, releaseID: firing.release.id))
            let body = (try? JSONBody.encode(payload)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            resolves.append(NewAlert(firings: [], delivery: AlertDeliveryRecord(alertID: firing.alertID, hookID: hook.id, app: app, ruleID: rule.id,
                                                                                event: "resolve", body: body, createdAt: now, nextAttemptAt: now)))
        }
        return resolves
    }
}
