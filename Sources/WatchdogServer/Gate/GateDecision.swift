/// What `GET /v1/apps/{app}/gate` answers a CI job: may this release ship?
///
/// - `fail`: the release's share of sessions with a glitch is higher than its base's, by the
///   always-valid (sequential) interval — it holds however
///   often the job asks, so re-running a pipeline until it passes does not make a regression
///   pass. It fails *also when the verdict reads `unreliable`*: sessions concentrated in one
///   network or one burst say who sent them, not that the release is fine, and a holder of the
///   public ingest key must not be able to turn a fail into a wait by posting a burst.
/// - `not_yet`: too little evidence to say either (fewer sessions or installs on a side than
///   the minimums — checked first, so a few invented installs decide nothing —, no base, an
///   concentrated evidence (the reliability marks) without a regression — whatever the
///   verdict, `no_change` included —, or an interval that still allows a
///   regression of `maximum_ratio`× (1.5 by default): "no regression seen" is not yet "no
///   regression").
/// - `pass`: enough evidence, reliable, and no regression.
///
/// The comparison is `compare`'s with `interval=sequential`: sessions held apart as
/// implausible, unlisted releases and reports of sessions that never started are already out
/// of it.
struct GateDecision: Equatable {
    enum Result: String {
        case pass
        case fail
        case notYet = "not_yet"

        /// The process exit code `watchdogd gate` ends with.
        var exitCode: Int32 {
            switch self {
            case .pass: 0
            case .fail: 1
            case .notYet: 2
            }
        }
    }

    /// What the decision needs besides the comparison.
    struct Thresholds: Equatable {
        var minimumSessions = 200
        var minimumInstalls = 20
        /// `pass` needs the interval's upper limit below it (a regression that large ruled out),
        /// not only no regression seen: 1.5, the effect size the sequential interval is tuned for.
        var maximumRatio = 1.5
    }

    var result: Result
    var reasons: [String]

    /// Decides from a sequential comparison, or without one (`missing`: why there is none).
    static func decide(_ view: CompareView?, installs: (base: Int, target: Int), thresholds: Thresholds, missing: String? = nil) -> GateDecision {
        guard let view else { return GateDecision(result: .notYet, reasons: [missing ?? "nothing to compare yet"]) }
        var short: [String] = []
        for (name, sessions, count) in [("base", view.overall.base.sessions, installs.base), ("release", view.overall.target.sessions, installs.target)] {
            if sessions < thresholds.minimumSessions { short.append("the \(name) has \(sessions) sessions of the \(thresholds.minimumSessions) needed") }
            if count < thresholds.minimumInstalls { short.append("the \(name)'s sessions come from \(count) installs of the \(thresholds.minimumInstalls) needed") }
        }
        // Below the minimums neither pass nor fail: a handful of installs — which a holder of
        // the public ingest key can invent — must not decide a release either way.
        guard short.isEmpty else { return GateDecision(result: .notYet, reasons: short) }
        let overall = view.overall
        if overall.intervalVerdict == "regressed" {
            var reasons = ["the interval lies above 1: more sessions have a glitch than in the base, whenever you look"]
            if overall.verdict == "unreliable" {
                reasons.append("its sessions are concentrated (\(view.reliability.reasons.map(\.message).joined(separator: "; "))): "
                    + "that says who sent them, not that the release is fine: a regression is not held back by it; a person should look at who sent them")
            }
            return GateDecision(result: .fail, reasons: reasons)
        }
        // Concentrated sessions never pass, whatever the interval says: a `no_change` diluted by
        // one network's sessions is no more evidence than an `improved` one.
        if !view.reliability.reliable {
            return GateDecision(result: .notYet, reasons: [overall.reason ?? "its sessions are concentrated: "
                + view.reliability.reasons.map(\.message).joined(separator: "; ")])
        }
        switch overall.verdict {
        case nil:
            return GateDecision(result: .notYet, reasons: [overall.reason ?? "no verdict"])
        default:
            break
        }
        guard let upper = overall.interval?.upper, upper < thresholds.maximumRatio else {
            let allows = overall.interval?.upper.map { "\(GateSummary.ratio($0))×" } ?? "any ratio"
            return GateDecision(result: .notYet, reasons: ["no regression seen, but the interval still allows up to \(allows) the base's rate; pass needs it below \(GateSummary.ratio(thresholds.maximumRatio))× (maximum_ratio)"])
        }
        return GateDecision(result: .pass, reasons: ["enough sessions and installs on both sides, no regression, and a regression of \(GateSummary.ratio(thresholds.maximumRatio))× or more ruled out"])
    }

    static func describe(_ comparison: SessionComparison) -> String {
        guard let ratio = comparison.ratio, let interval = comparison.interval else { return comparison.verdict ?? "no verdict" }
        let upper = interval.upper.map { GateSummary.ratio($0) } ?? "∞"
        return "\(GateSummary.ratio(ratio))× the base's rate, always-valid 95 % interval \(GateSummary.ratio(interval.lower))–\(upper)×"
    }
}
