import Dispatch
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

/// Sends the outbox's due deliveries on `workers` threads of its own, apart from rule
/// evaluation, and records each attempt (status, latency, error) in the store — the delivery
/// log. A 2xx ends a delivery; anything else is retried by `AlertRetryPolicy`.
///
/// A hook has at most one request in flight: its due deliveries go in order on one worker,
/// and the first failure ends that hook's turn (one dead receiver costs one timeout per pass,
/// not one per alert). Another hook's deliveries go on other workers meanwhile, so a hook
/// that never answers holds up only its own — unless more than `workers` such hooks are due
/// at once. Delivery is at least once: a crash between the receiver's 2xx and its record
/// sends the same body and `Watchdog-Delivery` again.
final class AlertDeliverer: Sendable {
    private struct Job {
        var hookID: String
        var deliveries: [AlertDeliveryRecord]
        var pass: Pass?
    }

    /// A manual pass (`deliverDue`): waits for its jobs, adds up what they did.
    private final class Pass: Sendable {
        let group = DispatchGroup()
        let counts = Locked((finished: 0, attempted: 0))
    }

    private struct State {
        /// Hooks with a job queued or running: not scheduled again until it ends.
        var busyHooks: Set<String> = []
        var jobs: [Job] = []
        var stopping = false
        /// Threads started, which `stop` waits for: the dispatcher, and the workers once the first job came.
        var threads = 0
        var workersStarted = false
    }

    private let store: any TelemetryStore
    private let clock: @Sendable () -> Int64
    private let transport: WebhookTransport
    /// Where e-mail hooks send (`--smtp-url`); `nil`: their deliveries fail and are retried.
    private let smtp: SMTPSettings?
    private let policy: AlertRetryPolicy
    /// Lowercased; empty: any host.
    private let allowedHosts: Set<String>
    private let logger: Logger
    private let state = Locked(State())
    private let jobsQueued = DispatchSemaphore(value: 0)
    private let wakeUp = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)
    /// Finished deliveries kept per hook, newest first: its delivery log.
    static let logLength = 200
    /// Due deliveries read per pass, and at most this many of one hook.
    static let perPass = 100
    static let perHook = 10
    /// Requests in flight at once, one per hook at most.
    static let workers = 8

    /// `dispatching`: a thread of its own looks for due deliveries every second and when
    /// woken (the daemon); without it only `deliverDue` does (tests run passes by hand).
    init(store: any TelemetryStore, clock: @escaping @Sendable () -> Int64, transport: WebhookTransport, policy: AlertRetryPolicy,
         allowedHosts: Set<String> = [], smtp: SMTPSettings? = nil, logger: Logger, dispatching: Bool = false) {
        self.store = store
        self.smtp = smtp
        self.allowedHosts = allowedHosts
        self.clock = clock
        self.transport = transport
        self.policy = policy
        self.logger = logger
        if dispatching {
            state.withLock { $0.threads += 1 }
            ServiceThread.start("wd-deliveries") { [self] in dispatch() }
        }
    }

    /// Starts the workers, once (a test application that never delivers has none).
    private func startWorkers() {
        let start = state.withLock { state -> Bool in
            guard !state.workersStarted, !state.stopping else { return false }
            state.workersStarted = true
            state.threads += Self.workers
            return true
        }
        guard start else { return }
        for index in 0..<Self.workers {
            ServiceThread.start("wd-webhook-\(index + 1)") { [self] in work() }
        }
    }

    /// Attempts every delivery due now, on the workers, and waits for them; how many ended
    /// (delivered or given up) and how many were tried. Hooks already busy are left to their
    /// worker. Once `stop` is called no attempt starts and one cut short is not recorded (the
    /// delivery stays pending, as it was).
    @discardableResult
    func deliverDue() throws -> (finished: Int, attempted: Int) {
        let pass = Pass()
        try schedule(pass: pass)
        pass.group.wait()
        return pass.counts.withLock { $0 }
    }

    /// Looks for due deliveries now rather than at the next tick.
    func wake() {
        wakeUp.signal()
    }

    var isStopping: Bool { state.withLock { $0.stopping } }

    /// Stops the threads; requests in flight are cancelled (`transport.cancel()`) and their
    /// deliveries stay pending. Returns once every thread has ended.
    func stop() {
        let (first, threads) = state.withLock { state -> (Bool, Int) in
            defer { state.stopping = true }
            return (!state.stopping, state.threads)
        }
        guard first else { return }
        transport.cancel()
        wakeUp.signal()
        for _ in 0..<Self.workers { jobsQueued.signal() }
        for _ in 0..<threads { exited.wait() }
    }

    /// Queues one job per idle hook with due deliveries.
    private func schedule(pass: Pass?) throws {
        guard !isStopping else { return }
        let due = try store.dueAlertDeliveries(now: clock(), limit: Self.perPass, perHook: Self.perHook)
        var byHook: [String: [AlertDeliveryRecord]] = [:], order: [String] = []
        for delivery in due {
            if byHook[delivery.hookID] == nil { order.append(delivery.hookID) }
            byHook[delivery.hookID, default: []].append(delivery)
        }
        let queued = state.withLock { state -> Int in
            guard !state.stopping else { return 0 }
            var queued = 0
            for hook in order where !state.busyHooks.contains(hook) {
                state.busyHooks.insert(hook)
                pass?.group.enter()
                state.jobs.append(Job(hookID: hook, deliveries: byHook[hook] ?? [], pass: pass))
                queued += 1
            }
            return queued
        }
        guard queued > 0 else { return }
        startWorkers()
        for _ in 0..<queued { jobsQueued.signal() }
    }

    private func dispatch() {
        while !isStopping {
            _ = wakeUp.wait(timeout: .now() + .seconds(1))
            do { try schedule(pass: nil) } catch where !PostgresStore.isUnreachable(error) { logger.warning("alert delivery failed: \(error)") } catch {}
        }
        exited.signal()
    }

    private func work() {
        while true {
            jobsQueued.wait()
            let job = state.withLock { state -> Job? in
                guard !state.stopping, !state.jobs.isEmpty else { return nil }
                return state.jobs.removeFirst()
            }
            if isStopping {
                // Jobs left queued end here; their passes must not wait for them.
                let left = state.withLock { state -> [Job] in defer { state.jobs.removeAll() }; return state.jobs }
                for job in left + (job.map { [$0] } ?? []) { job.pass?.group.leave() }
                break
            }
            guard let job else { continue }
            var counts = (finished: 0, attempted: 0)
            do { counts = try run(job) } catch { logger.warning("alert delivery to hook \(job.hookID) failed: \(error)") }
            state.withLock { _ = $0.busyHooks.remove(job.hookID) }
            if let pass = job.pass {
                pass.counts.withLock { $0.finished += counts.finished; $0.attempted += counts.attempted }
                pass.group.leave()
            } else if counts.finished > 0 {
                wakeUp.signal()  // the hook may have more due
            }
        }
        exited.signal()
    }

    /// One hook's due deliveries in order, until the first failure.
    private func run(_ job: Job) throws -> (finished: Int, attempted: Int) {
        guard let hook = try store.alertHook(id: job.hookID) else { return (0, 0) }
        let isMail = hook.kind == HookKind.email.rawValue
        let url = URL(string: hook.url)
        guard isMail || url != nil else { return (0, 0) }
        var finished = 0, attempted = 0
        for delivery in job.deliveries {
            guard !isStopping else { break }
            // E-mail goes to the operator's --smtp-url, not to a host a hook names.
            if !isMail, let url, !allowedHosts.isEmpty, !allowedHosts.contains(url.host?.lowercased() ?? "") {
                try store.recordAlertAttempt(deliveryID: delivery.id, AlertAttempt(
                    at: clock(), status: nil, latencyMilliseconds: 0, error: "host \(url.host ?? "") is not in --alert-allowed-hosts; not sent", delivered: false, retryAt: nil))
                finished += 1
                continue
            }
            let outcome = send(delivery, hook: hook, url: url)
            guard !isStopping else { break }
            attempted += 1
            let now = clock()
            let delivered = outcome.status.map { (200..<300).contains($0) } ?? false
            let retryAt = delivered ? nil : policy.retryAt(afterAttempts: delivery.attempts + 1, now: now, createdAt: delivery.createdAt)
            let error = delivered ? nil : outcome.status.map { "HTTP \($0)" + (outcome.error.map { ": \($0)" } ?? "") } ?? outcome.error
            try store.recordAlertAttempt(deliveryID: delivery.id, AlertAttempt(at: now, status: outcome.status, latencyMilliseconds: outcome.milliseconds,
                                                                                error: error, delivered: delivered, retryAt: retryAt))
            if delivered || retryAt == nil { finished += 1 }
            if !delivered {
                if retryAt == nil { logger.warning("alert \(delivery.alertID) to hook \(hook.id) given up after \(delivery.attempts + 1) attempts: \(error ?? "")") }
                break
            }
        }
        if finished > 0 { try store.pruneAlertDeliveries(keepPerHook: Self.logLength) }
        return (finished, attempted)
    }

    /// One attempt in the hook's format (`HookFormats`): a POST, signed with the hook's secret
    /// where the format allows (not PagerDuty's, whose secret is its routing key), or an e-mail.
    private func send(_ delivery: AlertDeliveryRecord, hook: AlertHookRecord, url: URL?) -> WebhookTransport.Outcome {
        switch HookFormats.request(delivery, hook: hook, sender: smtp?.sender ?? "watchdogd@localhost") {
        case .mail(let recipients, let message):
            guard let smtp else { return WebhookTransport.Outcome(status: nil, error: "e-mail is not set up: no --smtp-url, or its --smtp-credentials-file could not be read", milliseconds: 0) }
            return transport.sendMail(smtp, recipients: recipients, message: message)
        case .post(let body, let signed):
            guard let url else { return WebhookTransport.Outcome(status: nil, error: "the hook has no URL", milliseconds: 0) }
            let timestamp = clock() / 1000
            var headers = [
                ("Content-Type", "application/json"),
                ("User-Agent", "watchdogd"),
                ("Watchdog-Event", delivery.event),
                ("Watchdog-Delivery", delivery.alertID),
                ("Idempotency-Key", delivery.alertID + (delivery.event == "resolve" ? "-resolve" : "")),
            ]
            if signed {
                headers.append(("Watchdog-Timestamp", String(timestamp)))
                headers.append(("Watchdog-Signature", WebhookSignature.header(secret: hook.secret, timestamp: timestamp, body: body)))
            }
            return transport.post(url, headers: headers, body: body)
        }
    }
}
