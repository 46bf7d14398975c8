import Testing
@testable import WatchdogServer
@testable import WatchdogStore

/// What the release gate answers for a comparison (issue 39, point 2): a regression fails
/// whether or not its sessions are concentrated; "not yet" is for too little evidence.
@Suite struct GateDecisionTests {
    static let release = ReleaseID(version: "14.2.0", build: "1")

    /// A sequential comparison of 1,200 sessions a side, `affected` of the target's affected
    /// (the base: 72), marked unreliable when `burst`.
    static func view(affected: Int, burst: Bool) -> CompareView {
        let base = SessionComparison.Side(sessions: 1_200, affectedSessions: 72, reports: 72, floodedReports: 0)
        let target = SessionComparison.Side(sessions: 1_200, affectedSessions: affected, reports: affected, floodedReports: 0)
        var view = CompareView(app: "app", intervalMethod: .sequential,
                               base: ReleaseSummary(cohort: Cohort(), release: release, label: "base"), target: ReleaseSummary(cohort: Cohort(), release: release, label: "target"),
                               overall: SessionComparison(base: base, target: target, method: .sequential), byKind: [], byScreen: [], byKeyboardMode: [], byIdiom: [])
        if burst {
            view.reliability = VerdictReliability(reasons: [.init(code: "one_burst", side: "target", message: "67 % of the target's sessions started in one hour")])
            view.overall = view.reliability.apply(view.overall)
        }
        return view
    }

    static func decide(_ view: CompareView) -> GateDecision {
        GateDecision.decide(view, installs: (400, 400), thresholds: GateDecision.Thresholds())
    }

    @Test func aRegressionFailsEvenWhenItsSessionsAreConcentrated() {
        let reliable = Self.decide(Self.view(affected: 144, burst: false))
        #expect(reliable.result == .fail, "\(reliable)")
        let view = Self.view(affected: 144, burst: true)
        #expect(view.overall.verdict == "unreliable" && view.overall.intervalVerdict == "regressed")
        let unreliable = Self.decide(view)
        #expect(unreliable.result == .fail && unreliable.result.exitCode == 1, "\(unreliable)")
        #expect(unreliable.reasons.contains { $0.contains("started in one hour") }, "the reasons say why it is unreliable: \(unreliable)")
    }

    @Test func concentratedSessionsWithoutARegressionAreNotYetAndTooFewAreNotYet() {
        let unreliable = Self.decide(Self.view(affected: 30, burst: true))
        #expect(Self.view(affected: 30, burst: true).overall.intervalVerdict == "improved")
        #expect(unreliable.result == .notYet, "concentrated evidence never passes: \(unreliable)")
        let pass = Self.decide(Self.view(affected: 30, burst: false))
        #expect(pass.result == .pass, "\(pass)")
        // A no_change on concentrated sessions (a cohort diluted by one network) never passes either.
        let diluted = Self.view(affected: 72, burst: true)
        #expect(diluted.overall.verdict == "no_change" && !diluted.reliability.reliable)
        #expect(Self.decide(diluted).result == .notYet, "\(Self.decide(diluted))")
        let few = GateDecision.decide(Self.view(affected: 144, burst: true), installs: (10, 400), thresholds: GateDecision.Thresholds())
        #expect(few.result == .notYet && few.reasons.contains { $0.contains("installs of the 20 needed") }, "\(few)")
    }
}
