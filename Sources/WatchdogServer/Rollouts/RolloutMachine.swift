import Foundation

/// What the guard decides at one look.
enum RolloutDecision: Equatable, Sendable {
    case wait(String)
    case advance(String)
    case rollBack(String)
    /// The evidence cannot be acted on (`unreliable`): stop, and have a person decide.
    case pause(String)

    var name: String {
        switch self {
        case .wait: "wait"
        case .advance: "advance"
        case .rollBack: "roll_back"
        case .pause: "pause"
        }
    }

    var reason: String {
        switch self {
        case .wait(let reason), .advance(let reason), .rollBack(let reason), .pause(let reason): reason
        }
    }
}

/// The rollout state machine, in plain values: what the guard decides from evidence, and how
/// a decision or a person's action changes a rollout. No store, no clock, no config: the
/// service (`RolloutService`) reads those and saves what this returns, so every decision is
/// the same for the same state, evidence and time.
///
/// A step is taken in two saves: the event is first stored as `pending`, then the config
/// version is made, then `finish` records it. A crash between the two leaves `pending`, which
/// the next pass finishes (making the version only if the rule does not have the percentage yet).
enum RolloutMachine {
    /// The author of the guard's config versions.
    static let guardActor = "rollout-guard"

    /// A new rollout of `rule` at its first step; the `started` event is pending (its config
    /// version sets the first percentage).
    static func start(app: String, rule: String, plan: RolloutPlan, fromPercent: Double, actor: String, now: Int64) -> Rollout {
        var rollout = Rollout(app: app, rule: rule, plan: plan, status: .active, step: 0, percent: fromPercent, startedAt: now, startedBy: actor,
                              stepStartedAt: now, baseline: [:], lastLook: nil, pending: nil, alertPending: nil, history: [])
        rollout.pending = RolloutEvent(at: now, action: "started", actor: actor, fromPercent: fromPercent, toPercent: plan.steps[0], step: 0,
                                       reason: "rollout started: steps \(plan.steps.map(percent).joined(separator: " → "))", configVersion: nil, evidence: [])
        return rollout
    }

    /// The guard's decision on `evidence` (one entry per release of the rollout) at `now`.
    ///
    /// Nothing is decided before the step has lasted `minimum_hours` and each cohort gathered
    /// `minimum_sessions` since it began — a rollback no more than an advance, so that a burst
    /// of forged sessions in the first minutes of a step cannot undo a good switch. Then a
    /// `regressed` interval the guard watches rolls back, reliable or not (concentrated
    /// sessions say who sent them, not that the switch is harmless); an `unreliable` verdict
    /// otherwise pauses the rollout for a person (with an alert) instead of waiting silently;
    /// a sample ratio mismatch (`SampleRatio`) or a withheld verdict waits; else the step advances.
    static func decide(_ rollout: Rollout, evidence: [RolloutEvidence], now: Int64) -> RolloutDecision {
        guard rollout.status == .active else { return .wait("the rollout is \(rollout.status.rawValue)") }
        guard rollout.pending == nil else { return .wait("a step is being applied") }
        let plan = rollout.plan
        let hours = Double(now - rollout.stepStartedAt) / 3_600_000
        let matched = evidence.reduce(0) { $0 + $1.matched.stepSessions }, unmatched = evidence.reduce(0) { $0 + $1.unmatched.stepSessions }
        var short: String?
        if hours < plan.minimumHours {
            short = "the step at \(percent(rollout.percent)) has lasted \(String(format: "%.1f", max(0, hours))) of its \(String(format: "%g", plan.minimumHours)) hours"
        } else if matched < plan.minimumSessions || unmatched < plan.minimumSessions {
            short = "\(matched) sessions matched and \(unmatched) not matched since the step began; each needs \(plan.minimumSessions)"
        }
        let regressions = evidence.flatMap { release in release.verdicts.filter(\.regressed).map { (release, $0) } }
        if !regressions.isEmpty {
            let what = regressions.map { release, verdict in
                "\(scope(verdict.scope)) regressed in \(AlertMessage.code(release.release)): \(describe(verdict))"
                    + (verdict.verdict == "unreliable" ? " (unreliable: \(release.reasons.joined(separator: "; ")))" : "")
            }.joined(separator: "; ")
            guard let short else { return .rollBack(what) }
            return .wait("\(what); a rollback waits for the step's minimum like an advance: \(short)")
        }
        if let short { return .wait(short) }
        // Only releases with sessions on both sides at this step can hold an advance back.
        let compared = evidence.filter { $0.matched.stepSessions > 0 && $0.unmatched.stepSessions > 0 }
        // Concentrated evidence never advances, whatever the verdict reads: a `no_change`
        // diluted by one network's sessions is no more evidence than an `improved` one.
        for release in compared where !release.reliable || release.verdicts.contains(where: { $0.verdict == "unreliable" }) {
            return .pause("the guard cannot tell: the evidence in \(AlertMessage.code(release.release)) is unreliable "
                + "(\(release.reasons.joined(separator: "; "))); paused for a person to resume, advance or abort")
        }
        // A split that is not the configured one says the cohorts stopped standing for the same
        // installs: no step on it — and no rollback on it alone either (a regression did that above).
        for release in evidence {
            if let split = release.sampleRatio, split.mismatch {
                return .wait("held: \(split.reason ?? "sample ratio mismatch") in \(AlertMessage.code(release.release)); the guard advances once the split matches again, or a person decides")
            }
        }
        for release in compared {
            if let verdict = release.verdicts.first(where: { $0.verdict == nil }) {
                return .wait("no verdict on \(scope(verdict.scope)) in \(AlertMessage.code(release.release)): \(verdict.reason ?? "withheld")")
            }
        }
        return .advance("no regression in \(compared.count) release\(compared.count == 1 ? "" : "s") with \(matched) sessions matched and \(unmatched) not matched at this step")
    }

    /// `all kinds`, or a kind as a code span (kinds are client words).
    private static func scope(_ scope: String) -> String {
        scope == "overall" ? "all kinds" : AlertMessage.code(scope)
    }

    /// The pending event a guard decision makes: the next step (the last one completes), or
    /// back to 0 %; `nil` for `wait`.
    static func event(for decision: RolloutDecision, _ rollout: Rollout, evidence: [RolloutEvidence], now: Int64) -> RolloutEvent? {
        switch decision {
        case .wait, .pause: return nil
        case .advance(let reason): return nextStep(rollout, actor: guardActor, reason: reason, evidence: evidence, now: now)
        case .rollBack(let reason):
            return RolloutEvent(at: now, action: "rolled_back", actor: guardActor, fromPercent: rollout.percent, toPercent: 0, step: rollout.step,
                                reason: reason, configVersion: nil, evidence: evidence)
        }
    }

    private static func nextStep(_ rollout: Rollout, actor: String, reason: String, evidence: [RolloutEvidence], now: Int64) -> RolloutEvent {
        let next = min(rollout.step + 1, rollout.plan.steps.count - 1)
        return RolloutEvent(at: now, action: next == rollout.plan.steps.count - 1 ? "completed" : "advanced", actor: actor, fromPercent: rollout.percent,
                            toPercent: rollout.plan.steps[next], step: next, reason: reason, configVersion: nil, evidence: evidence)
    }

    /// A person's action. `pause` and `resume` change the state alone; `advance` (one step) and
    /// `abort` (the rule back to 0 %) leave a pending event whose config version the service makes.
    /// - Throws: 409 when the rollout's state does not allow it.
    static func act(_ action: String, on rollout: inout Rollout, actor: String, now: Int64) throws(APIError) {
        guard !rollout.isFinished else {
            throw APIError(status: 409, code: "rollout_finished", message: "the rollout of rule \(rollout.rule) is \(rollout.status.rawValue); start a new one with POST …/rollouts")
        }
        guard rollout.pending == nil else {
            throw APIError(status: 409, code: "rollout_busy", message: "a step of the rollout of rule \(rollout.rule) is being applied; try again in a moment")
        }
        let from = rollout.percent
        func event(_ action: String, _ step: Int, _ to: Double, _ reason: String) -> RolloutEvent {
            RolloutEvent(at: now, action: action, actor: actor, fromPercent: from, toPercent: to, step: step, reason: reason, configVersion: nil, evidence: [])
        }
        switch action {
        case "pause":
            guard rollout.status == .active else { throw APIError(status: 409, code: "rollout_not_active", message: "the rollout of rule \(rollout.rule) is already paused") }
            rollout.status = .paused
            rollout.record(event("paused", rollout.step, rollout.percent, "paused by \(actor): no step advances until resumed"))
        case "resume":
            guard rollout.status == .paused else { throw APIError(status: 409, code: "rollout_not_paused", message: "the rollout of rule \(rollout.rule) is not paused") }
            rollout.status = .active
            rollout.record(event("resumed", rollout.step, rollout.percent, "resumed by \(actor)"))
        case "advance":
            rollout.pending = nextStep(rollout, actor: actor, reason: "advanced one step by \(actor)", evidence: rollout.lastLook?.evidence ?? [], now: now)
        case "abort":
            rollout.pending = event("aborted", rollout.step, 0, "aborted by \(actor): the rule is back at 0 %")
        default:
            throw .notFound("no rollout action \(action.prefix(40)); actions: pause, resume, advance, abort")
        }
    }

    /// The guard's pause on evidence it cannot act on: no config version (the rule keeps its
    /// percentage), a `paused` event, and the `rollout_paused` alert to store.
    static func pause(_ rollout: inout Rollout, reason: String, evidence: [RolloutEvidence], now: Int64) {
        rollout.status = .paused
        rollout.record(RolloutEvent(at: now, action: "paused", actor: guardActor, fromPercent: rollout.percent, toPercent: rollout.percent,
                                    step: rollout.step, reason: reason, configVersion: nil, evidence: evidence))
        rollout.alertPending = AlertCondition.rolloutPaused.rawValue
    }

    /// Records the pending event once its config version (`nil`: the rule already had the
    /// percentage) is saved; `baseline` is each release's cohort sessions under the new
    /// percentage, from which the next step counts.
    static func finish(_ rollout: inout Rollout, configVersion: Int?, baseline: [String: CohortSessions]) {
        guard var event = rollout.pending else { return }
        event.configVersion = configVersion
        rollout.pending = nil
        rollout.percent = event.toPercent
        rollout.step = event.step
        rollout.stepStartedAt = event.at
        rollout.baseline = baseline
        switch event.action {
        case "completed":
            rollout.status = .completed
            rollout.alertPending = AlertCondition.rolloutCompleted.rawValue
        case "rolled_back":
            rollout.status = .rolledBack
            rollout.alertPending = AlertCondition.rolloutRolledBack.rawValue
        case "aborted":
            rollout.status = .aborted
        default:
            break
        }
        rollout.record(event)
    }

    /// The config version's note for a step: what was done, by whom, why, on which evidence.
    /// At most `maximumNote` characters.
    static func note(_ rollout: Rollout, _ event: RolloutEvent) -> String {
        var text = "rollout of rule \(rollout.rule): \(event.action.replacingOccurrences(of: "_", with: " ")) \(percent(event.fromPercent)) → \(percent(event.toPercent)) "
            + "by \(event.actor): \(event.reason)"
        for release in event.evidence {
            text += "\n\(AlertMessage.code(release.release)): matched \(release.matched.sessions) sessions (\(release.matched.affectedSessions) affected), "
                + "not matched \(release.unmatched.sessions) (\(release.unmatched.affectedSessions) affected); "
                + release.verdicts.map { "\(scope($0.scope)) \(describe($0))" }.joined(separator: ", ")
        }
        return AlertMessage.cut(text, to: maximumNote)
    }

    static let maximumNote = 4_000

    /// `regressed 2.10× (always-valid 95 % interval 1.40–3.20×)`.
    static func describe(_ verdict: RolloutEvidence.Verdict) -> String {
        let ratio = verdict.ratio.map { String(format: "%.2f×", $0) } ?? "no ratio"
        let interval = verdict.lower.map { lower in
            " (always-valid 95 % interval \(String(format: "%.2f", lower))–\(verdict.upper.map { String(format: "%.2f×", $0) } ?? "∞"))"
        } ?? ""
        let word = verdict.verdict == "unreliable" ? "unreliable (the interval alone: \(verdict.intervalVerdict ?? "no verdict"))" : verdict.verdict ?? "no verdict"
        return "\(word) \(ratio)\(interval)"
    }

    static func percent(_ value: Double) -> String { String(format: "%g %%", value) }
}
