import Dispatch
import Foundation
import Locking
import Logging
import WatchdogStore

/// Guarded rollouts (docs/rollouts-and-alerts.md, "Guarded rollouts"): starts them, takes a person's pause, resume,
/// advance and abort, and runs the guard on its own thread (`wd-rollouts`), every
/// `rolloutIntervalSeconds`, never on ingest's.
///
/// Every change to a rollout is a compare-and-set on its stored revision, and every step a
/// config version made through `ConfigService` (ETag, history, restore), so two nodes on one
/// PostgreSQL store, or the guard and a person, cannot both take a step. What a pass decides
/// rests on the store and the clock only: a restart resumes a rollout where it was.
final class RolloutService: Sendable {
    private struct State {
        var stopping = false
    }

    private let store: any TelemetryStore
    private let config: ConfigService
    private let lookup: ReleaseLookup
    private let alerts: AlertService
    private let clock: @Sendable () -> Int64
    private let logger: Logger
    private let intervalSeconds: Int
    private let background: Bool
    private let state = Locked(State())
    /// One pass or action at a time on this node (the store's revision guards across nodes).
    private let serial = Locked(())
    private let wakeUp = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Rollouts one app may have stored (finished ones included; a new rollout of a rule
    /// replaces its finished one).
    static let maximumRollouts = ConfigDocument.maximumRules

    init(store: any TelemetryStore, config: ConfigService, lookup: ReleaseLookup, alerts: AlertService, settings: ServerSettings,
         clock: @escaping @Sendable () -> Int64, logger: Logger) {
        self.store = store
        self.config = config
        self.lookup = lookup
        self.alerts = alerts
        self.clock = clock
        self.logger = logger
        intervalSeconds = settings.rolloutIntervalSeconds
        background = settings.alertsInBackground
        if background {
            ServiceThread.start("wd-rollouts") { [self] in run() }
        }
    }

    // MARK: Stored form

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()

    private struct Stored {
        var rollout: Rollout
        var revision: Int
    }

    private func load(app: String?) throws -> [Stored] {
        try store.rollouts(app: app).compactMap { record in
            guard let rollout = try? Self.decoder.decode(Rollout.self, from: Data(record.document.utf8)) else {
                logger.warning("rollout of rule \(record.ruleID) of \(record.app) is unreadable; left alone")
                return nil
            }
            return Stored(rollout: rollout, revision: record.revision)
        }
    }

    /// Saves `rollout` over `revision`; the new revision, or `nil` when another save came first.
    private func save(_ rollout: Rollout, over revision: Int) throws -> Int? {
        let document = String(decoding: try Self.encoder.encode(rollout), as: UTF8.self)
        let record = RolloutRecord(app: rollout.app, ruleID: rollout.rule, revision: revision, status: rollout.status.rawValue, document: document, updatedAt: clock())
        return try store.saveRollout(record, expectedRevision: revision) ? revision + 1 : nil
    }

    // MARK: A person's requests

    func rollouts(app: String) throws(APIError) -> [Rollout] {
        guard try storeCall({ try config.document(app: app) }) != nil else { throw .notFound("no app \(app)") }
        return try storeCall { try load(app: app) }.map(\.rollout)
    }

    func rollout(app: String, rule: String) throws(APIError) -> Rollout {
        guard let found = try rollouts(app: app).first(where: { $0.rule == rule }) else {
            throw .notFound("app \(app) has no rollout of rule \(rule.prefix(64)); start one with POST /v1/admin/apps/\(app)/rollouts")
        }
        return found
    }

    /// Starts a rollout of `rule` at its plan's first step (a config version by `actor`).
    func start(app: String, rule ruleID: String, actor: String, plan readPlan: () throws(APIError) -> RolloutPlan) throws(APIError) -> Rollout {
        try serial.withLock { _ throws(APIError) in
            guard let document = try storeCall({ try config.document(app: app) }) else { throw .notFound("no app \(app)") }
            guard let rule = document.rules.first(where: { $0.id == ruleID }) else {
                throw .notFound("rule \(ruleID.prefix(64)) is not in the app's current config; its rules are: \(document.rules.map(\.id).joined(separator: ", ").prefix(400))")
            }
            if rule.set.keys.contains("test_crash") || rule.set.keys.contains("test_crash_expires_at") {
                throw .badRequest("rollout_not_allowed", "rule \(rule.id) sets test_crash: crashing installs on purpose is not rolled out by a guard (its budget and expiry bound it); change its percent by hand")
            }
            let plan = try readPlan()
            let existing = try storeCall { try load(app: app) }
            let previous = existing.first { $0.rollout.rule == ruleID }
            if let previous, !previous.rollout.isFinished {
                throw APIError(status: 409, code: "rollout_exists", message: "rule \(ruleID) already has a \(previous.rollout.status.rawValue) rollout; abort it first")
            }
            if previous == nil, existing.count >= Self.maximumRollouts {
                throw APIError(status: 409, code: "limit_reached", message: "\(app) has \(Self.maximumRollouts) rollouts stored, the most an app may have")
            }
            var rollout = RolloutMachine.start(app: app, rule: ruleID, plan: plan, fromPercent: rule.match.percent, actor: actor, now: clock())
            guard var revision = try storeCall({ try save(rollout, over: previous?.revision ?? 0) }) else {
                throw APIError(status: 409, code: "rollout_changed", message: "the rollout of rule \(ruleID) changed meanwhile; try again")
            }
            try complete(&rollout, revision: &revision)
            return rollout
        }
    }

    /// `pause`, `resume`, `advance` (one step) or `abort`, by `actor`.
    func act(_ action: String, app: String, rule: String, actor: String) throws(APIError) -> Rollout {
        try serial.withLock { _ throws(APIError) in
            guard try storeCall({ try config.document(app: app) }) != nil else { throw .notFound("no app \(app)") }
            guard let stored = try storeCall({ try load(app: app) }).first(where: { $0.rollout.rule == rule }) else {
                throw .notFound("app \(app) has no rollout of rule \(rule.prefix(64))")
            }
            var rollout = stored.rollout
            try RolloutMachine.act(action, on: &rollout, actor: actor, now: clock())
            guard var revision = try storeCall({ try save(rollout, over: stored.revision) }) else {
                throw APIError(status: 409, code: "rollout_changed", message: "the rollout of rule \(rule) changed meanwhile; GET it and try again")
            }
            try complete(&rollout, revision: &revision)
            return rollout
        }
    }

    // MARK: The guard

    /// One pass over every app's rollouts: finishes pending steps and alerts, and looks at
    /// every active rollout. Returns how many steps it took.
    @discardableResult
    func evaluate() throws -> Int {
        try serial.withLock { _ in
            var steps = 0
            for stored in try load(app: nil) {
                do {
                    steps += try look(stored) ? 1 : 0
                } catch {
                    logger.warning("rollout of rule \(stored.rollout.rule) of \(stored.rollout.app) not evaluated: \(error)")
                }
            }
            return steps
        }
    }

    /// Whether a step was taken.
    private func look(_ stored: Stored) throws -> Bool {
        var rollout = stored.rollout, revision = stored.revision
        if rollout.pending != nil || rollout.alertPending != nil {
            try complete(&rollout, revision: &revision)
            return true
        }
        guard rollout.status == .active else { return false }
        let now = clock()
        guard var document = try config.document(app: rollout.app) else { return false }
        if document.rules.first(where: { $0.id == rollout.rule })?.match.percent != rollout.percent {
            // Another node may have taken the step a moment ago: read the stored config before
            // calling the rule changed by hand.
            try config.reloadFromStore(app: rollout.app)
            document = try config.document(app: rollout.app) ?? document
        }
        guard let rule = document.rules.first(where: { $0.id == rollout.rule }), rule.match.percent == rollout.percent else {
            // A person removed the rule or set its percentage by hand: the plan no longer says
            // what the rule does, so it ends (without a config version of its own).
            let current = document.rules.first { $0.id == rollout.rule }
            rollout.status = .aborted
            rollout.record(RolloutEvent(at: now, action: "aborted", actor: RolloutMachine.guardActor, fromPercent: rollout.percent, toPercent: current?.match.percent ?? 0,
                                        step: rollout.step, reason: current == nil ? "the rule was removed from the config" : "the rule's percent was set by hand (config version \(document.version))",
                                        configVersion: nil, evidence: []))
            let aborted = rollout
            _ = try guardAudited(rollout, aborted.history.last) { () throws(APIError) in try storeCall { try save(aborted, over: revision) } }
            return true
        }
        let evidence = try evidence(rollout, rule: rule, now: now)
        let decision = RolloutMachine.decide(rollout, evidence: evidence, now: now)
        rollout.lastLook = RolloutLook(at: now, decision: decision.name, reason: decision.reason, evidence: evidence)
        rollout.pending = RolloutMachine.event(for: decision, rollout, evidence: evidence, now: now)
        if case .pause(let reason) = decision { RolloutMachine.pause(&rollout, reason: reason, evidence: evidence, now: now) }
        guard let saved = try save(rollout, over: revision) else { return false }
        revision = saved
        guard rollout.pending != nil || rollout.alertPending != nil else { return false }
        try complete(&rollout, revision: &revision)
        return true
    }

    /// Makes the pending step's config version, records the step, then stores its alerts.
    private func complete(_ rollout: inout Rollout, revision: inout Int) throws(APIError) {
        if let event = rollout.pending {
            var version: Int?
            do {
                let note = RolloutMachine.note(rollout, event)
                version = try guardAudited(rollout, event) { () throws(APIError) in
                    try storeCall {
                        try config.setRulePercent(app: rollout.app, ruleID: rollout.rule, percent: event.toPercent, actor: event.actor, note: note)
                    }.document.version
                }
            } catch where error.status == 404 {
                version = nil  // the rule is gone: nothing matches it any more, whatever the step
            }
            let baseline = try baseline(rollout, percent: event.toPercent)
            RolloutMachine.finish(&rollout, configVersion: version, baseline: baseline)
            guard let saved = try storeCall({ try save(rollout, over: revision) }) else {
                throw APIError(status: 409, code: "rollout_changed", message: "the rollout of rule \(rollout.rule) changed meanwhile; GET it and try again")
            }
            revision = saved
        }
        if let condition = rollout.alertPending {
            try storeCall { try fireAlerts(rollout, condition: condition) }
            rollout.alertPending = nil
            if let saved = try storeCall({ try save(rollout, over: revision) }) { revision = saved }
        }
    }

    /// Runs a step of the guard with its audit row (`rollout.guard.<action>`, by the guard) pending,
    /// written with the step's config version or the rollout's save. A step a person asked for
    /// (`POST …/rollouts/{rule}/{action}`) is already in its request's row: `body` alone runs.
    private func guardAudited<Result>(_ rollout: Rollout, _ event: RolloutEvent?, _ body: () throws(APIError) -> Result) throws(APIError) -> Result {
        guard PendingAudit.current == nil, let event else { return try body() }
        let audit = AuditLog(store: store, clock: clock, logger: logger)
        let after: JSONValue = .object(["rule": .string(rollout.rule), "action": .string(event.action), "from_percent": .number(event.fromPercent),
                                        "to_percent": .number(event.toPercent), "reason": .string(event.reason)])
        return try audit.around(audit.entry("rollout.guard.\(event.action)", app: rollout.app, actor: event.actor, address: "local", after: after), body)
    }

    /// The cohort comparison (sequential interval) of every release of the rollout: those the
    /// rule applies to that alerts watch (`ReleaseReach.watched`: recent, declared or of
    /// comparable reach), so that a release invented from a few networks cannot hold it up.
    private func evidence(_ rollout: Rollout, rule: ConfigRule, now: Int64) throws(APIError) -> [RolloutEvidence] {
        let releases = try releases(rollout, now: now).filter { rule.applies(to: $0.release) }
        var evidence: [RolloutEvidence] = []
        for release in releases {
            let view = try CompareRoutes.cohorts(lookup, app: rollout.app, release: release, rule: rule, method: .sequential)
            evidence.append(RolloutEvidence(view, guard: rollout.plan.guard, baseline: rollout.baseline[release.release.text]))
        }
        return evidence
    }

    private func releases(_ rollout: Rollout, now: Int64) throws(APIError) -> [ReleaseStats] {
        try ReleaseReach.of(app: rollout.app, lookup: lookup).watched(try lookup.releases(of: rollout.app), now: now)
    }

    /// Each release's cohort sessions once the rule has `percent`.
    private func baseline(_ rollout: Rollout, percent: Double) throws(APIError) -> [String: CohortSessions] {
        guard let document = try storeCall({ try config.document(app: rollout.app) }),
              var rule = document.rules.first(where: { $0.id == rollout.rule }) else { return [:] }
        rule.match.percent = percent
        var baseline: [String: CohortSessions] = [:]
        for release in try releases(rollout, now: clock()) where rule.applies(to: release.release) {
            let view = try CompareRoutes.cohorts(lookup, app: rollout.app, release: release, rule: rule, method: .sequential)
            baseline[release.release.text] = CohortSessions(matched: view.target.sessions, unmatched: view.base.sessions)
        }
        return baseline
    }

    /// Stores one alert per rule of `condition` of the app, once per rollout (its firing).
    private func fireAlerts(_ rollout: Rollout, condition: String) throws {
        // A pause is also told to those who wait for rollbacks: the guard could not decide one.
        let conditions: Set<String> = condition == AlertCondition.rolloutPaused.rawValue ? [condition, AlertCondition.rolloutRolledBack.rawValue] : [condition]
        let rules = try store.alertRules(app: rollout.app).filter { conditions.contains($0.condition) }
        guard !rules.isEmpty else { return }
        let hooks = Dictionary(try store.alertHooks(app: rollout.app).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let now = clock()
        let view = (try? JSONValue.parse(Array(RolloutService.encoder.encode(rollout)))) ?? nil
        let alerts = rules.compactMap { rule in
            hooks[rule.hookID].map { AlertMessage.rollout(rollout, view: view, rule: rule, hook: $0, now: now) }
        }
        if !(try store.recordAlerts(alerts, cleared: [])).isEmpty { self.alerts.wakeDeliveries() }
    }

    // MARK: The thread

    func stop() {
        state.withLock { $0.stopping = true }
        if background {
            wakeUp.signal()
            finished.wait()
        }
    }

    private func run() {
        while true {
            _ = wakeUp.wait(timeout: .now() + .seconds(intervalSeconds))
            if state.withLock({ $0.stopping }) { break }
            do { try evaluate() } catch { logger.warning("rollout guard pass failed: \(error)") }
        }
        finished.signal()
    }
}
