import Dispatch
import Foundation
import Locking
import Logging
import WatchdogStore

/// Alert rules evaluated off the ingest path, and their webhook deliveries (docs/architecture.md,
/// "Alerts").
///
/// The ingest writer only calls `commitsHappened()` after a commit — it notes the time, nothing
/// else. The service's own thread (`wd-alerts`) evaluates every app's rules
/// `alertDelaySeconds` after the first commit since its last pass (commits meanwhile join that
/// pass: under continuous ingest it evaluates once per delay, not once per commit), stores new
/// alerts and their deliveries in one transaction, and wakes the deliverer, whose own threads
/// send them (`AlertDeliverer`): a slow hook never delays an evaluation, nor another hook.
/// Request threads only write rules, hooks and queued test deliveries.
final class AlertService: Sendable {
    private struct State {
        /// When (monotonic) the first commit since the last evaluation happened.
        var changedSince: UInt64?
        var stopping = false
    }

    private let store: any TelemetryStore
    private let evaluator: AlertEvaluator
    let deliverer: AlertDeliverer
    /// Weekly digests, queued on this service's thread.
    let digests: DigestScheduler
    private let transport: WebhookTransport
    private let clock: @Sendable () -> Int64
    private let logger: Logger
    private let delayNanoseconds: UInt64
    private let state = Locked(State())
    /// One evaluation at a time (the worker's, or a test's).
    private let evaluation = Locked(())
    private let wakeUp = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let background: Bool

    /// `lookup`: the stats routes' own, so rules and views share the per-release caches.
    init(store: any TelemetryStore, lookup: ReleaseLookup, settings: ServerSettings, clock: @escaping @Sendable () -> Int64, logger: Logger) {
        self.store = store
        self.clock = clock
        self.logger = logger
        evaluator = AlertEvaluator(lookup: lookup)
        digests = DigestScheduler(store: store, digest: WeeklyDigest(lookup: lookup), clock: clock, logger: logger)
        transport = WebhookTransport(timeoutSeconds: settings.alertTimeoutSeconds)
        var policy = AlertRetryPolicy()
        policy.baseSeconds = settings.alertRetryBaseSeconds
        var smtp: SMTPSettings?
        do { smtp = try SMTPSettings.of(settings) } catch { logger.error("--smtp-credentials-file could not be read: \(error); e-mail hooks cannot send") }
        deliverer = AlertDeliverer(store: store, clock: clock, transport: transport, policy: policy, allowedHosts: settings.alertAllowedHosts, smtp: smtp,
                                   logger: logger, dispatching: settings.alertsInBackground)
        delayNanoseconds = UInt64(settings.alertDelaySeconds) * 1_000_000_000
        background = settings.alertsInBackground
        // A pass soon after start: commits of before a restart (or a kill -9) and rules added
        // with the CLI are evaluated even if nothing else arrives.
        state.withLock { $0.changedSince = DispatchTime.now().uptimeNanoseconds }
        if background {
            ServiceThread.start("wd-alerts") { [self] in run() }
        }
    }

    /// Called on the ingest writer's thread after each commit: notes that data changed, so the
    /// worker evaluates after the delay. Nothing else runs here.
    func commitsHappened() {
        let now = DispatchTime.now().uptimeNanoseconds
        state.withLock { if $0.changedSince == nil { $0.changedSince = now } }
    }

    /// Sends queued deliveries now (a test delivery, new alerts) instead of at the next tick.
    func wakeDeliveries() {
        deliverer.wake()
    }

    /// Evaluates every app's rules once: stores an alert (and its delivery) for each condition
    /// that newly holds, clears those that no longer do. Returns how many alerts were stored.
    @discardableResult
    func evaluate() throws -> Int {
        let stored = try evaluation.withLock { _ in
            let rules = try store.alertRules(app: nil)
            var stored = 0
            for (app, appRules) in Dictionary(grouping: rules, by: \.app).sorted(by: { $0.key < $1.key }) {
                do {
                    stored += try evaluate(app: app, rules: appRules)
                } catch {
                    logger.warning("alert rules of \(app) not evaluated: \(error)")
                }
            }
            return stored
        }
        if stored > 0 { wakeDeliveries() }
        return stored
    }

    private func evaluate(app: String, rules: [AlertRuleRecord]) throws -> Int {
        let (findings, watched) = try evaluator.evaluate(app: app, rules: rules, now: clock())
        let firings = try store.alertFirings(app: app)
        func key(_ rule: String, _ subject: String) -> String { rule + "\n" + subject }
        let firing = Set(firings.map { key($0.ruleID, $0.subject) })
        let holding = Set(findings.map { key($0.rule.id, $0.subject) })
        let fresh = findings.filter { !firing.contains(key($0.rule.id, $0.subject)) }
        // A rollout's alert is the guard's, once per rollout: never cleared here.
        let rolloutRules = Set(rules.filter { AlertCondition(rawValue: $0.condition)?.isRollout == true }.map(\.id))
        let cleared = firings.filter { !rolloutRules.contains($0.ruleID) && watched.contains($0.release) && !holding.contains(key($0.ruleID, $0.subject)) }
        guard !fresh.isEmpty || !cleared.isEmpty else { return 0 }
        let hooks = Dictionary(try store.alertHooks(app: app).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let alerts = AlertMessage.alerts(fresh, hooks: hooks, app: app, now: clock())
        let resolves = AlertMessage.resolves(cleared: cleared, firings: firings, rules: rules, hooks: hooks, app: app, now: clock())
        return try store.recordAlerts(alerts + resolves, cleared: cleared).count
    }

    /// Stops the evaluation thread and the deliverer's; a delivery in flight is cancelled and
    /// stays pending (it is sent again after a restart).
    func stop() {
        state.withLock { $0.stopping = true }
        if background {
            wakeUp.signal()
            finished.wait()
        }
        deliverer.stop()
    }

    var isStopping: Bool { state.withLock { $0.stopping } }

    /// Seconds between looks for a week's digests to queue.
    static let digestIntervalSeconds: UInt64 = 60

    private func run() {
        var digestsDueAt = DispatchTime.now().uptimeNanoseconds
        while true {
            _ = wakeUp.wait(timeout: .now() + .seconds(1))
            let now = DispatchTime.now().uptimeNanoseconds
            let (stopping, evaluateNow) = state.withLock { state -> (Bool, Bool) in
                if state.stopping { return (true, false) }
                guard let since = state.changedSince, now >= since + delayNanoseconds else { return (false, false) }
                state.changedSince = nil
                return (false, true)
            }
            if stopping { break }
            if evaluateNow {
                do { try evaluate() } catch where !PostgresStore.isUnreachable(error) { logger.warning("alert evaluation failed: \(error)") } catch {}
            }
            if now >= digestsDueAt {
                digestsDueAt = now + Self.digestIntervalSeconds * 1_000_000_000
                do {
                    if try digests.queueDue() > 0 { wakeDeliveries() }
                } catch where !PostgresStore.isUnreachable(error) { logger.warning("weekly digests not queued: \(error)") } catch {}
            }
        }
        finished.signal()
    }
}
