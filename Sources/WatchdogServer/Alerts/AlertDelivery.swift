import Foundation
import Locking
import Logging
import WatchdogStore

/// When a failed delivery is tried again: after `base · 2ⁿ⁻¹` seconds for its n-th failure, at
/// most `cap` apart, until `window` after the alert fired; then it is marked `failed`.
public struct AlertRetryPolicy: Sendable {
    public var baseSeconds: Double = 10
    public var capSeconds: Double = 1800
    public var windowSeconds: Double = 86_400

    public init() {}

    /// The next attempt after `attempts` failed ones, the last at `now`; `nil` past the window.
    func retryAt(afterAttempts attempts: Int, now: Int64, createdAt: Int64) -> Int64? {
        let delay = min(capSeconds, baseSeconds * pow(2, Double(max(0, min(attempts - 1, 30)))))
        let next = now + Int64(delay * 1000)
        return next <= createdAt + Int64(windowSeconds * 1000) ? next : nil
    }
}

/// Sends the outbox's due deliveries, one at a time, and records each attempt (status,
/// latency, error) in the store — the delivery log. A 2xx ends a delivery; anything else is
/// retried by `AlertRetryPolicy`. A hook that failed once is not tried again in the same pass,
/// so one dead receiver costs one timeout per pass, not one per alert. Delivery is at least
/// once: a crash between the receiver's 2xx and its record sends the same body and
/// `Watchdog-Delivery` again.
final class AlertDeliverer: Sendable {
    private let store: any TelemetryStore
    private let clock: @Sendable () -> Int64
    private let transport: WebhookTransport
    private let policy: AlertRetryPolicy
    /// Lowercased; empty: any host.
    private let allowedHosts: Set<String>
    private let logger: Logger
    /// One pass at a time (the worker's, or a test's).
    private let pass = Locked(())
    /// Finished deliveries kept per hook, newest first: its delivery log.
    static let logLength = 200
    static let perPass = 100

    init(store: any TelemetryStore, clock: @escaping @Sendable () -> Int64, transport: WebhookTransport, policy: AlertRetryPolicy,
         allowedHosts: Set<String> = [], logger: Logger) {
        self.store = store
        self.allowedHosts = allowedHosts
        self.clock = clock
        self.transport = transport
        self.policy = policy
        self.logger = logger
    }

    /// Attempts every delivery due now; how many ended (delivered or given up) and how many
    /// were tried. Once `stopped` says so, no attempt starts and one cut short is not recorded
    /// (the delivery stays pending, as it was).
    @discardableResult
    func deliverDue(until stopped: () -> Bool = { false }) throws -> (finished: Int, attempted: Int) {
        try pass.withLock { _ in
            let due = try store.dueAlertDeliveries(now: clock(), limit: Self.perPass)
            var failedHooks: Set<String> = []
            var hooks: [String: AlertHookRecord?] = [:]
            var finished = 0, attempted = 0
            for delivery in due where !failedHooks.contains(delivery.hookID) {
                if hooks[delivery.hookID] == nil { hooks[delivery.hookID] = .some(try store.alertHook(id: delivery.hookID)) }
                guard let hook = hooks[delivery.hookID] ?? nil, let url = URL(string: hook.url) else { continue }
                guard !stopped() else { break }
                if !allowedHosts.isEmpty, !allowedHosts.contains(url.host?.lowercased() ?? "") {
                    try store.recordAlertAttempt(deliveryID: delivery.id, AlertAttempt(
                        at: clock(), status: nil, latencyMilliseconds: 0, error: "host \(url.host ?? "") is not in --alert-allowed-hosts; not sent", delivered: false, retryAt: nil))
                    finished += 1
                    continue
                }
                let outcome = send(delivery, to: url, secret: hook.secret)
                guard !stopped() else { break }
                attempted += 1
                let now = clock()
                let delivered = outcome.status.map { (200..<300).contains($0) } ?? false
                let retryAt = delivered ? nil : policy.retryAt(afterAttempts: delivery.attempts + 1, now: now, createdAt: delivery.createdAt)
                let error = delivered ? nil : outcome.status.map { "HTTP \($0)" + (outcome.error.map { ": \($0)" } ?? "") } ?? outcome.error
                try store.recordAlertAttempt(deliveryID: delivery.id, AlertAttempt(at: now, status: outcome.status, latencyMilliseconds: outcome.milliseconds,
                                                                                    error: error, delivered: delivered, retryAt: retryAt))
                if !delivered {
                    failedHooks.insert(delivery.hookID)
                    if retryAt == nil { logger.warning("alert \(delivery.alertID) to hook \(hook.id) given up after \(delivery.attempts + 1) attempts: \(error ?? "")") }
                }
                if delivered || retryAt == nil { finished += 1 }
            }
            if finished > 0 { try store.pruneAlertDeliveries(keepPerHook: Self.logLength) }
            return (finished, attempted)
        }
    }

    /// Returns once no pass is running.
    func waitForPass() {
        pass.withLock { _ in }
    }

    private func send(_ delivery: AlertDeliveryRecord, to url: URL, secret: String) -> WebhookTransport.Outcome {
        let body = Array(delivery.body.utf8)
        let timestamp = clock() / 1000
        return transport.post(url, headers: [
            ("Content-Type", "application/json"),
            ("User-Agent", "watchdogd"),
            ("Watchdog-Event", delivery.event),
            ("Watchdog-Delivery", delivery.alertID),
            ("Idempotency-Key", delivery.alertID),
            ("Watchdog-Timestamp", String(timestamp)),
            ("Watchdog-Signature", WebhookSignature.header(secret: secret, timestamp: timestamp, body: body)),
        ], body: body)
    }
}
