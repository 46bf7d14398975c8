/// Where alerts go: a signed webhook, PagerDuty, a Teams workflow or e-mail (`kind`).
public struct AlertHookRecord: Sendable, Equatable {
    public var id: String
    public var app: String
    public var name: String
    /// The endpoint posted to; empty for an `email` hook (the server's `--smtp-url` sends).
    public var url: String
    /// The HMAC-SHA256 key of the `Watchdog-Signature` header, or a `pagerduty` hook's routing
    /// key; never listed.
    public var secret: String
    public var createdAt: Int64
    public var createdBy: String
    /// `webhook`, `pagerduty`, `teams` or `email`.
    public var kind: String
    /// An `email` hook's recipients.
    public var recipients: [String]
    /// Whether the hook gets the app's weekly digest.
    public var digest: Bool

    public init(id: String, app: String, name: String, url: String, secret: String, createdAt: Int64, createdBy: String,
                kind: String = "webhook", recipients: [String] = [], digest: Bool = false) {
        self.id = id
        self.app = app
        self.name = name
        self.url = url
        self.secret = secret
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.kind = kind
        self.recipients = recipients
        self.digest = digest
    }
}

/// An alert rule as stored; what its fields mean per condition is the server's
/// (`AlertCondition`), the store keeps them as given.
public struct AlertRuleRecord: Sendable, Equatable {
    public var id: String
    public var app: String
    public var name: String
    public var condition: String
    public var kind: String?
    public var minimumSessions: Int
    public var minimumAffectedSessions: Int
    /// Distinct installs with sessions a release needs before the rule looks at it.
    public var minimumInstalls: Int
    /// Whose sessions the rule reads: `all`, or `attested` (installs with an App Attest key).
    public var installs: String
    public var threshold: Double?
    public var hookID: String
    public var createdAt: Int64
    public var createdBy: String

    public init(id: String, app: String, name: String, condition: String, kind: String?, minimumSessions: Int, minimumAffectedSessions: Int,
                threshold: Double?, hookID: String, createdAt: Int64, createdBy: String, minimumInstalls: Int = 0,
                installs: String = "all") {
        self.id = id
        self.app = app
        self.name = name
        self.condition = condition
        self.kind = kind
        self.minimumSessions = minimumSessions
        self.minimumAffectedSessions = minimumAffectedSessions
        self.minimumInstalls = minimumInstalls
        self.installs = installs
        self.threshold = threshold
        self.hookID = hookID
        self.createdAt = createdAt
        self.createdBy = createdBy
    }
}

/// A rule's condition holding for one subject (a release, or one issue of a release) that was
/// alerted; it stays until the condition clears, so the subject alerts once.
public struct AlertFiringRecord: Sendable, Hashable {
    public var ruleID: String
    /// What the condition holds for: the release's id, or release id and fingerprint.
    public var subject: String
    public var release: ReleaseID
    public var alertID: String
    public var firedAt: Int64

    public init(ruleID: String, subject: String, release: ReleaseID, alertID: String, firedAt: Int64) {
        self.ruleID = ruleID
        self.subject = subject
        self.release = release
        self.alertID = alertID
        self.firedAt = firedAt
    }
}

/// Where one delivery of an alert to a hook stands.
public enum AlertDeliveryState: String, Sendable {
    /// Not yet answered with a 2xx; tried again at `nextAttemptAt`.
    case pending
    case delivered
    /// Gave up: no 2xx within the retry window.
    case failed
}

/// One alert (or test) to one hook: the outbox row while pending, the delivery log after.
public struct AlertDeliveryRecord: Sendable, Equatable {
    public var id: Int64
    /// The idempotency key: the same on every attempt.
    public var alertID: String
    public var hookID: String
    public var app: String
    /// `nil` for a test delivery.
    public var ruleID: String?
    /// `alert` or `test`.
    public var event: String
    /// The JSON body, fixed when the alert fired: every attempt sends these bytes.
    public var body: String
    public var createdAt: Int64
    public var state: AlertDeliveryState
    public var attempts: Int
    public var nextAttemptAt: Int64?
    public var lastAttemptAt: Int64?
    /// The HTTP status of the last attempt; `nil` when it got no answer.
    public var lastStatus: Int?
    public var lastLatencyMilliseconds: Int?
    public var lastError: String?
    public var deliveredAt: Int64?

    public init(id: Int64 = 0, alertID: String, hookID: String, app: String, ruleID: String?, event: String, body: String, createdAt: Int64,
                state: AlertDeliveryState = .pending, attempts: Int = 0, nextAttemptAt: Int64?, lastAttemptAt: Int64? = nil, lastStatus: Int? = nil,
                lastLatencyMilliseconds: Int? = nil, lastError: String? = nil, deliveredAt: Int64? = nil) {
        self.id = id
        self.alertID = alertID
        self.hookID = hookID
        self.app = app
        self.ruleID = ruleID
        self.event = event
        self.body = body
        self.createdAt = createdAt
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastAttemptAt = lastAttemptAt
        self.lastStatus = lastStatus
        self.lastLatencyMilliseconds = lastLatencyMilliseconds
        self.lastError = lastError
        self.deliveredAt = deliveredAt
    }
}

/// A new alert: the firings it reports and the delivery that carries it. Without firings the
/// delivery is stored whatever else happened (a PagerDuty `resolve` of a cleared alert).
public struct NewAlert: Sendable {
    public var firings: [AlertFiringRecord]
    public var delivery: AlertDeliveryRecord

    public init(firings: [AlertFiringRecord], delivery: AlertDeliveryRecord) {
        self.firings = firings
        self.delivery = delivery
    }
}

/// How one delivery attempt ended.
public struct AlertAttempt: Sendable, Equatable {
    public var at: Int64
    public var status: Int?
    public var latencyMilliseconds: Int
    public var error: String?
    /// Delivered (a 2xx), tried again at this time, or given up when both are absent.
    public var delivered: Bool
    public var retryAt: Int64?

    public init(at: Int64, status: Int?, latencyMilliseconds: Int, error: String?, delivered: Bool, retryAt: Int64?) {
        self.at = at
        self.status = status
        self.latencyMilliseconds = latencyMilliseconds
        self.error = error
        self.delivered = delivered
        self.retryAt = retryAt
    }
}

/// What deleting a hook did.
public enum AlertHookDeletion: Sendable, Equatable {
    case deleted
    case notFound
    /// Rules still send to it: their ids.
    case inUse([String])
}
