import Foundation
import Testing
@testable import WatchdogServer

/// The guarded-rollout state machine in plain values: what it decides from evidence and time,
/// and how steps, pauses and aborts change a rollout.
@Suite struct RolloutMachineTests {
    static let hour: Int64 = 3_600_000
    static let plan = RolloutPlan(steps: [10, 25, 50, 100], minimumSessions: 100, minimumHours: 6,
                                  guard: RolloutGuard(overall: true, kinds: ["view_frame_mismatch"]))

    /// A rollout at `step` whose step began at 0 (its first event finished).
    static func rollout(step: Int = 0) -> Rollout {
        var rollout = RolloutMachine.start(app: "a", rule: "fix", plan: plan, fromPercent: 0, actor: "admin", now: 0)
        RolloutMachine.finish(&rollout, configVersion: 2, baseline: [:])
        rollout.step = step
        rollout.percent = plan.steps[step]
        return rollout
    }

    static func evidence(matched: Int = 500, unmatched: Int = 500, overall: String? = "no_change", kind: String? = "no_change",
                         reliable: Bool = true) -> [RolloutEvidence] {
        [RolloutEvidence(release: "14.2.0 (1)",
                         matched: .init(installs: 50, sessions: matched, affectedSessions: 10, stepSessions: matched),
                         unmatched: .init(installs: 50, sessions: unmatched, affectedSessions: 10, stepSessions: unmatched),
                         verdicts: [.init(scope: "overall", verdict: overall, ratio: 1.1, lower: 0.8, upper: 1.5, reason: nil),
                                    .init(scope: "view_frame_mismatch", verdict: kind, ratio: 1.0, lower: 0.7, upper: 1.4, reason: nil)],
                         reliable: reliable, reasons: reliable ? [] : ["80 % of the target's sessions come from its top 1 of 3 installs"])]
    }

    @Test func enoughEvidenceAndTimeWithoutRegressionAdvancesOneStep() {
        let rollout = Self.rollout()
        let decision = RolloutMachine.decide(rollout, evidence: Self.evidence(), now: 7 * Self.hour)
        guard case .advance = decision else { Issue.record("\(decision)"); return }
        let event = RolloutMachine.event(for: decision, rollout, evidence: Self.evidence(), now: 7 * Self.hour)
        #expect(event?.action == "advanced" && event?.toPercent == 25 && event?.step == 1 && event?.actor == RolloutMachine.guardActor)
    }

    @Test func aStepWaitsForItsHoursAndForSessionsOnBothSides() {
        let rollout = Self.rollout()
        #expect(RolloutMachine.decide(rollout, evidence: Self.evidence(), now: 5 * Self.hour).name == "wait")
        #expect(RolloutMachine.decide(rollout, evidence: Self.evidence(matched: 99), now: 7 * Self.hour).name == "wait")
        #expect(RolloutMachine.decide(rollout, evidence: Self.evidence(unmatched: 99), now: 7 * Self.hour).name == "wait")
        #expect(RolloutMachine.decide(rollout, evidence: [], now: 7 * Self.hour).name == "wait")
    }

    @Test func aRegressionRollsBackOnceTheStepHasItsMinimumHoursAndSessionsOverallOrForAWatchedKind() {
        let rollout = Self.rollout(step: 1)
        for evidence in [Self.evidence(overall: "regressed"), Self.evidence(kind: "regressed")] {
            // An hour into the step, with few sessions: a burst of forged sessions right after a
            // step must not undo it, so the rollback waits for the step's minimum like an advance.
            let early = RolloutMachine.decide(rollout, evidence: evidence.map { var e = $0; e.matched.stepSessions = 3; return e }, now: Self.hour)
            #expect(early.name == "wait" && early.reason.contains("regressed") && early.reason.contains("a rollback waits"), "\(early)")
            let short = RolloutMachine.decide(rollout, evidence: evidence.map { var e = $0; e.matched.stepSessions = 3; return e }, now: 7 * Self.hour)
            #expect(short.name == "wait", "\(short)")
            let decision = RolloutMachine.decide(rollout, evidence: evidence, now: 7 * Self.hour)
            guard case .rollBack(let reason) = decision else { Issue.record("\(decision)"); continue }
            #expect(reason.contains("regressed in `14.2.0 (1)`"), "\(reason)")
            let event = RolloutMachine.event(for: decision, rollout, evidence: evidence, now: 7 * Self.hour)
            #expect(event?.action == "rolled_back" && event?.toPercent == 0 && event?.fromPercent == 25)
        }
    }

    @Test func aRegressionThatReadsUnreliableStillRollsBackWithItsReasons() {
        var evidence = Self.evidence(overall: "unreliable", reliable: false)
        evidence[0].verdicts[0].intervalVerdict = "regressed"
        let decision = RolloutMachine.decide(Self.rollout(), evidence: evidence, now: 7 * Self.hour)
        guard case .rollBack(let reason) = decision else { Issue.record("\(decision)"); return }
        #expect(reason.contains("unreliable") && reason.contains("top 1 of 3 installs"), "\(reason)")
    }

    @Test func anUnreliableVerdictPausesTheRolloutForAPersonInsteadOfWaitingSilently() {
        var rollout = Self.rollout()
        let evidence = Self.evidence(overall: "unreliable", reliable: false)
        let decision = RolloutMachine.decide(rollout, evidence: evidence, now: 100 * Self.hour)
        guard case .pause(let reason) = decision else { Issue.record("\(decision)"); return }
        #expect(reason.contains("unreliable") && reason.contains("a person"), "\(reason)")
        #expect(RolloutMachine.event(for: decision, rollout, evidence: evidence, now: 100 * Self.hour) == nil, "no config version: the rule keeps its percentage")
        RolloutMachine.pause(&rollout, reason: reason, evidence: evidence, now: 100 * Self.hour)
        #expect(rollout.status == .paused && rollout.alertPending == "rollout_paused" && rollout.history.last?.actor == "rollout-guard")
        // Concentrated evidence whose verdict reads no_change (a cohort diluted by one network)
        // pauses too: it is no more evidence than an unreliable improvement.
        #expect(RolloutMachine.decide(Self.rollout(), evidence: Self.evidence(overall: "no_change", reliable: false), now: 100 * Self.hour).name == "pause")
        // Before its minimum a step waits either way; a withheld verdict waits.
        #expect(RolloutMachine.decide(Self.rollout(), evidence: evidence, now: Self.hour).name == "wait")
        #expect(RolloutMachine.decide(Self.rollout(), evidence: Self.evidence(overall: nil), now: 100 * Self.hour).name == "wait")
    }

    @Test func aPausedRolloutNeverStepsWhateverTheEvidence() throws {
        var rollout = Self.rollout()
        try RolloutMachine.act("pause", on: &rollout, actor: "ops", now: Self.hour)
        #expect(rollout.status == .paused)
        #expect(RolloutMachine.decide(rollout, evidence: Self.evidence(), now: 1_000 * Self.hour).name == "wait")
        #expect(RolloutMachine.decide(rollout, evidence: Self.evidence(overall: "regressed"), now: 1_000 * Self.hour).name == "wait")
        #expect(throws: APIError.self) { try RolloutMachine.act("pause", on: &rollout, actor: "ops", now: Self.hour) }
        try RolloutMachine.act("resume", on: &rollout, actor: "ops", now: 2 * Self.hour)
        #expect(rollout.status == .active && rollout.history.map(\.action) == ["started", "paused", "resumed"])
    }

    @Test func theLastStepCompletesAndAsksForItsAlert() {
        var rollout = Self.rollout(step: 2)
        let decision = RolloutMachine.decide(rollout, evidence: Self.evidence(), now: 7 * Self.hour)
        rollout.pending = RolloutMachine.event(for: decision, rollout, evidence: Self.evidence(), now: 7 * Self.hour)
        #expect(rollout.pending?.action == "completed" && rollout.pending?.toPercent == 100)
        RolloutMachine.finish(&rollout, configVersion: 9, baseline: [:])
        #expect(rollout.status == .completed && rollout.percent == 100 && rollout.alertPending == "rollout_completed")
        #expect(rollout.history.last?.configVersion == 9 && rollout.pending == nil)
    }

    @Test func aPersonAdvancesOneStepOrAbortsToZeroAndAFinishedRolloutTakesNoAction() throws {
        var rollout = Self.rollout()
        try RolloutMachine.act("advance", on: &rollout, actor: "ops", now: Self.hour)
        #expect(rollout.pending?.toPercent == 25 && rollout.pending?.actor == "ops")
        #expect(throws: APIError.self) { try RolloutMachine.act("abort", on: &rollout, actor: "ops", now: Self.hour) }  // a step is pending
        RolloutMachine.finish(&rollout, configVersion: 3, baseline: [:])
        #expect(rollout.step == 1 && rollout.stepStartedAt == Self.hour)
        try RolloutMachine.act("abort", on: &rollout, actor: "ops", now: 2 * Self.hour)
        RolloutMachine.finish(&rollout, configVersion: 4, baseline: [:])
        #expect(rollout.status == .aborted && rollout.percent == 0 && rollout.alertPending == nil)
        #expect(throws: APIError.self) { try RolloutMachine.act("resume", on: &rollout, actor: "ops", now: 3 * Self.hour) }
    }

    @Test func plansAreCheckedWithClearErrors() throws {
        func read(_ json: String) throws -> RolloutPlan {
            guard case .object(let fields)? = JSONValue.parse(Array(json.utf8)) else { throw APIError.badRequest("x", "not an object") }
            return try RolloutPlanReader.read(fields).plan
        }
        #expect(try read(#"{"rule": "r"}"#) == RolloutPlan(steps: [1, 5, 25, 50, 100], minimumSessions: 200, minimumHours: 24, guard: RolloutGuard(overall: true, kinds: [])))
        for bad in [#"{"rule": "r", "steps": [5, 5, 10]}"#, #"{"rule": "r", "steps": [0, 10]}"#, #"{"rule": "r", "steps": [10, 101]}"#, #"{"rule": "r", "steps": [50]}"#,
                    #"{"rule": "r", "steps": [1,2,3,4,5,6,7,8,9,10,11]}"#, #"{"rule": "r", "minimum_hours": -1}"#, #"{"rule": "r", "minimum_sessions": 1.5}"#,
                    #"{"rule": "r", "guard": {"overall": false}}"#, #"{"rule": "r", "guard": {"kinds": ["nope kind"]}}"#, #"{"rule": "r", "guard": {"x": 1}}"#] {
            #expect(throws: APIError.self, "\(bad)") { try read(bad) }
        }
    }

    @Test func theStoredFormRoundTrips() throws {
        var rollout = Self.rollout(step: 1)
        rollout.lastLook = RolloutLook(at: 5 * Self.hour, decision: "wait", reason: "r", evidence: Self.evidence())
        let data = try RolloutService.encoder.encode(rollout)
        #expect(try RolloutService.decoder.decode(Rollout.self, from: data) == rollout)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""step_started_at":"1970-01-01T00:00:00.000Z""#) && text.contains(#""minimum_sessions":100"#), "\(text.prefix(300))")
    }
}
