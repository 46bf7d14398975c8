/// The cohort comparison of one release at a look (`GET …/cohorts?interval=sequential`).
struct RolloutEvidence: Codable, Equatable, Sendable {
    struct Cohort: Codable, Equatable, Sendable {
        var installs: Int
        var sessions: Int
        var affectedSessions: Int
        /// Session starts since the step began.
        var stepSessions: Int
    }

    /// One verdict the guard reads: `overall` or a kind.
    struct Verdict: Codable, Equatable, Sendable {
        var scope: String
        /// `improved`, `regressed`, `no_change`, `unreliable`, or `nil` when withheld.
        var verdict: String?
        /// What the interval alone says, reliable or not (`nil` in rollouts stored before it was kept).
        var intervalVerdict: String?
        var ratio: Double?
        var lower: Double?
        var upper: Double?
        var reason: String?
    }

    var release: String
    var matched: Cohort
    var unmatched: Cohort
    var verdicts: [Verdict]
    /// The reliability marks of the comparison (`few_installs`, `one_network`, `one_burst`).
    var reliable: Bool
    var reasons: [String]
    /// The cohorts' split against the step's percent; a mismatch holds the step (`nil` in
    /// rollouts stored before it was kept).
    var sampleRatio: SampleRatio? = nil
}

extension RolloutEvidence.Verdict {
    /// Regressed by the interval, whether or not the verdict reads `unreliable`.
    var regressed: Bool { (intervalVerdict ?? verdict) == "regressed" }
}

extension RolloutEvidence {
    /// The evidence of one release from its cohort comparison, reading the verdicts `guard` watches.
    init(_ view: CompareView, guard watch: RolloutGuard, baseline: CohortSessions?) {
        func verdict(_ scope: String, _ comparison: SessionComparison) -> Verdict {
            Verdict(scope: scope, verdict: comparison.verdict, intervalVerdict: comparison.intervalVerdict, ratio: comparison.ratio,
                    lower: comparison.interval?.lower, upper: comparison.interval?.upper, reason: comparison.reason)
        }
        var verdicts: [Verdict] = []
        if watch.overall { verdicts.append(verdict("overall", view.overall)) }
        for kind in watch.kinds {
            if let breakdown = view.byKind.first(where: { $0.value == kind }) {
                verdicts.append(verdict(kind, breakdown.comparison))
            } else {
                let none: String? = view.overall.verdict == nil ? nil : "no_change"
                verdicts.append(Verdict(scope: kind, verdict: none, intervalVerdict: none, ratio: nil, lower: nil, upper: nil,
                                        reason: "no reports of this kind on either side"))
            }
        }
        self.init(release: view.cohort?.release ?? view.target.release,
                  matched: Cohort(installs: view.cohort?.installsMatched ?? 0, sessions: view.target.sessions, affectedSessions: view.target.affectedSessions,
                                  stepSessions: max(0, view.target.sessions - (baseline?.matched ?? 0))),
                  unmatched: Cohort(installs: view.cohort?.installsNotMatched ?? 0, sessions: view.base.sessions, affectedSessions: view.base.affectedSessions,
                                    stepSessions: max(0, view.base.sessions - (baseline?.unmatched ?? 0))),
                  verdicts: verdicts, reliable: view.reliability.reliable, reasons: view.reliability.reasons.map(\.message),
                  sampleRatio: view.cohort?.sampleRatio)
    }
}
