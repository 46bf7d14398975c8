import WatchdogHTTP
import WatchdogStore

/// `/v1/admin/apps/{app}/alerts/…` (admin tokens): rules, hooks, the delivery log and the
/// "send test" button. Handlers only read and write rows; evaluation and delivery run on the
/// alert worker (`AlertService`).
struct AlertRoutes: Sendable {
    let store: any TelemetryStore
    let alerts: AlertService
    let clock: @Sendable () -> Int64

    /// Deliveries shown with each hook in the listing.
    static let deliveriesListed = 10

    func rules(app: String) throws(APIError) -> HTTPResponse {
        try requireApp(app)
        let rules = try storeCall { try store.alertRules(app: app) }
        let firings = Dictionary(grouping: try storeCall { try store.alertFirings(app: app) }, by: \.ruleID)
        return JSONBody.response(AlertRulesView(app: app, rules: rules.map { AlertRuleView($0, firings: firings[$0.id] ?? []) }))
    }

    /// `POST …/alerts/rules {"condition": …, "hook": …, …}` → 201 with the rule.
    func createRule(_ request: HTTPRequest, app: String, principal: Principal) throws(APIError) -> HTTPResponse {
        let fields = try Self.object(request, example: #"{"condition": "release_regressed", "hook": "wh3f9a0c1d", "minimum_sessions": 200}"#,
                                     allowed: ["name", "condition", "hook", "kind", "minimum_sessions", "minimum_affected_sessions", "minimum_installs", "threshold", "installs"])
        let draft = AlertRuleDraft(name: try Self.string(fields, "name"), condition: try Self.string(fields, "condition") ?? "",
                                   hook: try Self.string(fields, "hook") ?? "", kind: try Self.string(fields, "kind"),
                                   minimumSessions: try Self.whole(fields, "minimum_sessions"),
                                   minimumAffectedSessions: try Self.whole(fields, "minimum_affected_sessions"),
                                   minimumInstalls: try Self.whole(fields, "minimum_installs"), threshold: try Self.number(fields, "threshold"),
                                   installs: try Self.string(fields, "installs"))
        guard fields["condition"] != nil, fields["hook"] != nil else {
            throw .badRequest("invalid_shape", "a rule needs condition and hook, e.g. {\"condition\": \"release_regressed\", \"hook\": \"wh3f9a0c1d\"}")
        }
        let rule = try AlertRules.rule(draft, app: app, createdAt: clock(), createdBy: principal.name)
        try requireApp(app)
        guard try storeCall({ try store.alertHooks(app: app) }).contains(where: { $0.id == rule.hookID }) else {
            // 409, not 404: the app exists; the body names a hook it does not have (yet).
            throw APIError(status: 409, code: "unknown_hook", message: "hook \(rule.hookID.prefix(64)) is not a hook of \(app); make one with POST /v1/admin/apps/\(app)/alerts/hooks")
        }
        guard try storeCall({ try store.alertRules(app: app) }).count < AlertRules.maximumRules else {
            throw APIError(status: 409, code: "limit_reached", message: "\(app) has \(AlertRules.maximumRules) alert rules, the most an app may have; delete one first")
        }
        try storeCall { try store.createAlertRule(rule) }
        // Evaluated at the next pass (soon), not on this request's thread.
        alerts.commitsHappened()
        return JSONBody.response(status: 201, AlertRuleView(rule, firings: []))
    }

    func deleteRule(app: String, id: String) throws(APIError) -> HTTPResponse {
        guard try storeCall({ try store.deleteAlertRule(app: app, id: id) }) else { throw .notFound("app \(app) has no alert rule \(id.prefix(64))") }
        return HTTPResponse(status: 204, headers: [("Cache-Control", "no-store")])
    }

    func hooks(app: String) throws(APIError) -> HTTPResponse {
        try requireApp(app)
        let hooks = try storeCall { try store.alertHooks(app: app) }
        var views: [AlertHookView] = []
        for hook in hooks {
            views.append(AlertHookView(hook, deliveries: try storeCall { try store.alertDeliveries(hookID: hook.id, limit: Self.deliveriesListed) }))
        }
        return JSONBody.response(AlertHooksView(app: app, hooks: views))
    }

    /// `POST …/alerts/hooks {"url": …, "name": …}` → 201 with the hook and its secret, shown once.
    func createHook(_ request: HTTPRequest, app: String, principal: Principal) throws(APIError) -> HTTPResponse {
        let fields = try Self.object(request, example: #"{"name": "release channel", "url": "https://hooks.slack.com/services/…"}"#,
                                     allowed: ["name", "url", "kind", "routing_key", "recipients", "digest"])
        let hook = try HookKind.hook(kind: try Self.string(fields, "kind"), name: try Self.string(fields, "name"), url: try Self.string(fields, "url"),
                                     routingKey: try Self.string(fields, "routing_key"), recipients: try Self.strings(fields, "recipients"),
                                     digest: try Self.bool(fields, "digest"), app: app, createdAt: clock(), createdBy: principal.name)
        try requireApp(app)
        guard try storeCall({ try store.alertHooks(app: app) }).count < AlertRules.maximumHooks else {
            throw APIError(status: 409, code: "limit_reached", message: "\(app) has \(AlertRules.maximumHooks) hooks, the most an app may have; delete one first")
        }
        try storeCall { try store.createAlertHook(hook) }
        return JSONBody.response(status: 201, AlertHookView(hook, deliveries: [], showSecret: true))
    }

    func deleteHook(app: String, id: String) throws(APIError) -> HTTPResponse {
        switch try storeCall({ try store.deleteAlertHook(app: app, id: id) }) {
        case .deleted: return HTTPResponse(status: 204, headers: [("Cache-Control", "no-store")])
        case .notFound: throw .notFound("app \(app) has no hook \(id.prefix(64))")
        case .inUse(let rules):
            throw APIError(status: 409, code: "hook_in_use", message: "rules \(rules.joined(separator: ", ").prefix(400)) send to hook \(id); delete them first")
        }
    }

    func deliveries(app: String, id: String) throws(APIError) -> HTTPResponse {
        let hook = try ownHook(app: app, id: id)
        let deliveries = try storeCall { try store.alertDeliveries(hookID: hook.id, limit: AlertDeliverer.logLength) }
        return JSONBody.response(AlertDeliveriesView(hook: hook.id, deliveries: deliveries.map(AlertDeliveryView.init)))
    }

    /// Queues a signed test delivery and wakes the worker: 202, and the delivery log shows how it went.
    func sendTest(app: String, id: String, principal: Principal) throws(APIError) -> HTTPResponse {
        let hook = try ownHook(app: app, id: id)
        let delivery = AlertMessage.test(hook: hook, by: principal.name, now: clock())
        let row = try storeCall { try store.enqueueAlertDelivery(delivery) }
        if hook.kind == HookKind.pagerduty.rawValue {
            // PagerDuty's test incident closes by itself: a resolve follows the trigger (a hook's deliveries go in order).
            var resolve = delivery
            resolve.event = "resolve"
            _ = try storeCall { try store.enqueueAlertDelivery(resolve) }
        }
        alerts.wakeDeliveries()
        return JSONBody.response(status: 202, QueuedTestView(hook: hook.id, alertID: delivery.alertID, delivery: row))
    }

    /// `POST …/alerts/hooks/{id}/digest`: queues a digest of the last 7 days to the hook now
    /// (for trying a hook; the weekly one is unaffected): 202, as a test delivery.
    func sendDigest(app: String, id: String) throws(APIError) -> HTTPResponse {
        let hook = try ownHook(app: app, id: id)
        guard HookKind(rawValue: hook.kind)?.takesDigest ?? false else {
            throw APIError(status: 409, code: "no_digest", message: "hook \(hook.id) is a \(hook.kind) hook, which takes no digest; use an email, teams or webhook hook")
        }
        let (delivery, row) = try alerts.digests.queueNow(hook: hook)
        alerts.wakeDeliveries()
        return JSONBody.response(status: 202, QueuedTestView(hook: hook.id, alertID: delivery.alertID, delivery: row))
    }

    private func ownHook(app: String, id: String) throws(APIError) -> AlertHookRecord {
        guard let hook = try storeCall({ try store.alertHook(id: id) }), hook.app == app else { throw .notFound("app \(app) has no hook \(id.prefix(64))") }
        return hook
    }

    private func requireApp(_ app: String) throws(APIError) {
        guard try storeCall({ try store.appExists(app) }) else { throw .notFound("no app \(app)") }
    }

    // MARK: Request bodies

    static func object(_ request: HTTPRequest, example: String, allowed: Set<String>) throws(APIError) -> [String: JSONValue] {
        guard case .object(let fields)? = JSONValue.parse(request.body) else { throw .badRequest("invalid_json", "the body must be a JSON object, e.g. \(example)") }
        for key in fields.keys.sorted() where !allowed.contains(key) {
            throw .badRequest("invalid_field", "\(key.prefix(40)) is not a field; the fields are \(allowed.sorted().joined(separator: ", "))")
        }
        return fields
    }

    static func string(_ fields: [String: JSONValue], _ name: String) throws(APIError) -> String? {
        switch fields[name] {
        case nil: return nil
        case .string(let value)?: return value
        case let other?: throw .badRequest("invalid_field", "\(name) must be a string, got \(other.typeName)")
        }
    }

    static func bool(_ fields: [String: JSONValue], _ name: String) throws(APIError) -> Bool? {
        switch fields[name] {
        case nil: return nil
        case .bool(let value)?: return value
        case let other?: throw .badRequest("invalid_field", "\(name) must be true or false, got \(other.typeName)")
        }
    }

    /// An array of strings, at most 100.
    static func strings(_ fields: [String: JSONValue], _ name: String) throws(APIError) -> [String]? {
        switch fields[name] {
        case nil: return nil
        case .array(let values)? where values.count <= 100:
            var strings: [String] = []
            for value in values {
                guard case .string(let text) = value else { throw .badRequest("invalid_field", "\(name) must be an array of strings, got an element \(value.typeName)") }
                strings.append(text)
            }
            return strings
        case let other?: throw .badRequest("invalid_field", "\(name) must be an array of at most 100 strings, got \(other.typeName)")
        }
    }

    static func number(_ fields: [String: JSONValue], _ name: String) throws(APIError) -> Double? {
        switch fields[name] {
        case nil: return nil
        case .number(let value)?: return value
        case let other?: throw .badRequest("invalid_field", "\(name) must be a number, got \(other.typeName)")
        }
    }

    static func whole(_ fields: [String: JSONValue], _ name: String) throws(APIError) -> Int? {
        guard let value = try number(fields, name) else { return nil }
        guard value == value.rounded(), abs(value) <= 1e12 else { throw .badRequest("invalid_field", "\(name) must be a whole number, got \(value)") }
        return Int(value)
    }
}
