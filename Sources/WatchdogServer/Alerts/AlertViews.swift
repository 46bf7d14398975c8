import WatchdogStore
import WatchdogWire

/// `GET …/alerts/rules`.
struct AlertRulesView: Encodable {
    var app: String
    var rules: [AlertRuleView]
}

/// One rule, with the subjects it is firing for. Parameters another condition takes are `null`.
struct AlertRuleView: Encodable {
    struct Firing: Encodable {
        var release: String
        var subject: String
        var alertID: String
        var firedAt: String

        enum CodingKeys: String, CodingKey {
            case release, subject
            case alertID = "alert_id"
            case firedAt = "fired_at"
        }
    }

    var id: String
    var name: String
    var condition: String
    var hook: String
    @NullWhenAbsent var kind: String? = nil
    @NullWhenAbsent var minimumSessions: Int? = nil
    @NullWhenAbsent var minimumAffectedSessions: Int? = nil
    @NullWhenAbsent var minimumInstalls: Int? = nil
    @NullWhenAbsent var threshold: Double? = nil
    /// `all` or `attested`, for the conditions that take it.
    @NullWhenAbsent var installs: String? = nil
    var createdAt: String
    var createdBy: String
    /// Conditions that fired and have not cleared: no new alert for them until they do.
    var firing: [Firing]

    init(_ rule: AlertRuleRecord, firings: [AlertFiringRecord]) {
        id = rule.id
        name = rule.name
        condition = rule.condition
        hook = rule.hookID
        let parameters = AlertCondition(rawValue: rule.condition)?.parameters ?? []
        kind = rule.kind
        if parameters.contains("minimum_sessions") { minimumSessions = rule.minimumSessions }
        if parameters.contains("minimum_affected_sessions") { minimumAffectedSessions = rule.minimumAffectedSessions }
        if parameters.contains("minimum_installs") { minimumInstalls = rule.minimumInstalls }
        threshold = rule.threshold
        if parameters.contains("installs") { installs = rule.installs }
        createdAt = Timestamp.format(milliseconds: rule.createdAt)
        createdBy = rule.createdBy
        firing = firings.map { Firing(release: $0.release.text, subject: $0.subject, alertID: $0.alertID, firedAt: Timestamp.format(milliseconds: $0.firedAt)) }
    }

    enum CodingKeys: String, CodingKey {
        case id, name, condition, hook, kind, threshold, firing, installs
        case minimumSessions = "minimum_sessions"
        case minimumAffectedSessions = "minimum_affected_sessions"
        case minimumInstalls = "minimum_installs"
        case createdAt = "created_at"
        case createdBy = "created_by"
    }
}

/// `GET …/alerts/hooks`.
struct AlertHooksView: Encodable {
    var app: String
    var hooks: [AlertHookView]
}

/// A hook without its secret; `secret` only in the answer that made it (shown once).
struct AlertHookView: Encodable {
    var id: String
    var name: String
    /// `webhook`, `pagerduty`, `teams` or `email`.
    var kind: String
    /// Empty for an `email` hook.
    var url: String
    /// An `email` hook's recipients (absent for the other kinds).
    var recipients: [String]?
    /// Whether the hook gets the weekly digest.
    var digest: Bool
    var createdAt: String
    var createdBy: String
    /// Set only when a `webhook` or `teams` hook was just made (a `pagerduty` hook's routing
    /// key was given and is not shown again; an `email` hook signs nothing).
    var secret: String?
    /// The newest deliveries, newest first.
    var deliveries: [AlertDeliveryView]

    init(_ hook: AlertHookRecord, deliveries: [AlertDeliveryRecord], showSecret: Bool = false) {
        id = hook.id
        name = hook.name
        kind = hook.kind
        url = hook.url
        recipients = hook.kind == HookKind.email.rawValue ? hook.recipients : nil
        digest = hook.digest
        createdAt = Timestamp.format(milliseconds: hook.createdAt)
        createdBy = hook.createdBy
        // Only the kinds that sign get theirs: a pagerduty hook's is its routing key, an email hook signs nothing.
        secret = showSecret && (hook.kind == HookKind.webhook.rawValue || hook.kind == HookKind.teams.rawValue) ? hook.secret : nil
        self.deliveries = deliveries.map(AlertDeliveryView.init)
    }

    enum CodingKeys: String, CodingKey {
        case id, name, kind, url, recipients, digest, secret, deliveries
        case createdAt = "created_at"
        case createdBy = "created_by"
    }
}

/// `GET …/alerts/hooks/{id}/deliveries`.
struct AlertDeliveriesView: Encodable {
    var hook: String
    var deliveries: [AlertDeliveryView]
}

/// One delivery: the delivery log's row.
struct AlertDeliveryView: Encodable {
    var id: Int64
    var alertID: String
    var event: String
    @NullWhenAbsent var rule: String? = nil
    var state: String
    var attempts: Int
    var createdAt: String
    @NullWhenAbsent var lastAttemptAt: String? = nil
    @NullWhenAbsent var nextAttemptAt: String? = nil
    @NullWhenAbsent var deliveredAt: String? = nil
    @NullWhenAbsent var lastStatus: Int? = nil
    @NullWhenAbsent var lastLatencyMs: Int? = nil
    @NullWhenAbsent var lastError: String? = nil

    init(_ delivery: AlertDeliveryRecord) {
        id = delivery.id
        alertID = delivery.alertID
        event = delivery.event
        rule = delivery.ruleID
        state = delivery.state.rawValue
        attempts = delivery.attempts
        createdAt = Timestamp.format(milliseconds: delivery.createdAt)
        lastAttemptAt = delivery.lastAttemptAt.map(Timestamp.format(milliseconds:))
        nextAttemptAt = delivery.state == .pending ? delivery.nextAttemptAt.map(Timestamp.format(milliseconds:)) : nil
        deliveredAt = delivery.deliveredAt.map(Timestamp.format(milliseconds:))
        lastStatus = delivery.lastStatus
        lastLatencyMs = delivery.lastLatencyMilliseconds
        lastError = delivery.lastError
    }

    enum CodingKeys: String, CodingKey {
        case id, event, rule, state, attempts
        case alertID = "alert_id"
        case createdAt = "created_at"
        case lastAttemptAt = "last_attempt_at"
        case nextAttemptAt = "next_attempt_at"
        case deliveredAt = "delivered_at"
        case lastStatus = "last_status"
        case lastLatencyMs = "last_latency_ms"
        case lastError = "last_error"
    }
}

/// `POST …/alerts/hooks/{id}/test`: queued, sent by the alert worker.
struct QueuedTestView: Encodable {
    var hook: String
    var alertID: String
    var delivery: Int64
    var state = "pending"

    enum CodingKeys: String, CodingKey {
        case hook, delivery, state
        case alertID = "alert_id"
    }
}
