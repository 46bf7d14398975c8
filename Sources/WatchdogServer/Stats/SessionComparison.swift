import Foundation

/// Two groups of sessions (two releases, or two config cohorts of one release) and how they
/// compare: the share of sessions with at least one glitch, target against base.
///
/// The verdict rests on *affected sessions*, not on report counts: reports cluster (a view that
/// flips every second in one session sends hundreds), so a Poisson interval on counts lets one
/// device flip it. A session counts once however much it reports. For each side
///
///     p = x / n                       (x affected sessions, n sessions)
///     (l, u) = Wilson score interval of p at 95 %
///
/// When sessions cluster by install (one device starting hundreds of sessions, each with the
/// same glitch), the Wilson interval of that side is taken at an effective sample size
/// n / deff, where deff ≥ 1 is the design effect of clustering by install (a cluster-robust
/// variance of the ratio estimator against the binomial one; see `InstallClusters`), so one
/// install cannot make an interval look certain. The ratio θ = p_target / p_base gets the MOVER-R interval of Donner & Zou (2012), which
/// combines the two Wilson intervals (Newcombe's method, for a ratio):
///
///     L = (p₁p₂ − √((p₁p₂)² − l₁u₂(2p₁ − l₁)(2p₂ − u₂))) / (u₂(2p₂ − u₂))
///     U = (p₁p₂ + √((p₁p₂)² − u₁l₂(2p₁ − u₁)(2p₂ − l₂))) / (l₂(2p₂ − l₂))
///
/// with 1 = target, 2 = base. It needs no continuity correction at zero counts: a kind absent
/// from the base has an unbounded upper limit (`null`) and a finite lower one. The verdict reads
/// the interval: entirely below 1 `improved`, entirely above 1 `regressed`, else `no_change`.
/// Reports per 1,000 sessions stay as a secondary figure (`report_rate_ratio`), without verdict.
///
/// That interval is right for one look. With `method: .sequential` the interval is instead the
/// always-valid one of `SequentialInterval`, which holds however often the comparison is
/// looked at (alerts, the release gate and guarded rollouts read that one).
struct SessionComparison: Encodable, Equatable {
    struct Side: Encodable, Equatable {
        var sessions: Int
        var affectedSessions: Int
        @NullWhenAbsent var affectedSessionRate: Double? = nil
        /// Headline reports (app active, under the flood cap).
        var reports: Int
        var floodedReports: Int
        @NullWhenAbsent var reportsPer1kSessions: Double? = nil
        /// ≥ 1: how much clustering widens this side's interval (1: none measured) — by network
        /// when the side is weighted, else the side's overall one.
        var designEffect: Double = 1
        /// The side by network, each network's weight bounded (`NetworkWeighting`): what the
        /// ratio and the interval read; `nil` for breakdowns not kept per install (screen,
        /// keyboard mode, idiom), which read the plain counts at `designEffect`.
        var weighted: NetworkWeighting.Estimate?

        init(sessions: Int, affectedSessions: Int, reports: Int, floodedReports: Int, designEffect: Double = 1) {
            self.designEffect = max(1, designEffect.isFinite ? designEffect : 1)
            self.sessions = sessions
            // Reports can name sessions whose start never arrived: at most every session is affected.
            self.affectedSessions = min(max(0, affectedSessions), max(0, sessions))
            self.reports = reports
            self.floodedReports = floodedReports
            if sessions > 0 {
                affectedSessionRate = Double(self.affectedSessions) / Double(sessions)
                reportsPer1kSessions = Double(reports) * 1000 / Double(sessions)
            }
        }

        /// The same counts, weighted by network.
        init(sessions: Int, affectedSessions: Int, reports: Int, floodedReports: Int, weighted: NetworkWeighting.Estimate) {
            self.init(sessions: sessions, affectedSessions: affectedSessions, reports: reports, floodedReports: floodedReports,
                      designEffect: weighted.designEffect)
            self.weighted = weighted
        }

        enum CodingKeys: String, CodingKey {
            case sessions, reports, weighting
            case affectedSessions = "affected_sessions"
            case affectedSessionRate = "affected_session_rate"
            case floodedReports = "flooded_reports"
            case reportsPer1kSessions = "reports_per_1k_sessions"
            case designEffect = "design_effect"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(sessions, forKey: .sessions)
            try container.encode(affectedSessions, forKey: .affectedSessions)
            try container.encode(affectedSessionRate, forKey: .affectedSessionRate)
            try container.encode(reports, forKey: .reports)
            try container.encode(floodedReports, forKey: .floodedReports)
            try container.encode(reportsPer1kSessions, forKey: .reportsPer1kSessions)
            try container.encode(designEffect, forKey: .designEffect)
            try container.encode(weighted.map(WeightingView.init), forKey: .weighting)
        }

        /// Affected and sessions at the effective sample size.
        var effective: (x: Double, n: Double) {
            weighted?.effective ?? (Double(affectedSessions) / designEffect, Double(sessions) / designEffect)
        }

        /// The rate the ratio reads: the weighted one when the side is weighted.
        var rate: Double { weighted?.rate ?? Double(affectedSessions) / Double(max(1, sessions)) }
    }

    /// How a weighted side weighs (`weighting` in the JSON).
    struct WeightingView: Encodable, Equatable {
        var networks: Int
        var boundedNetworks: Int
        var sessions: Double
        var affectedSessions: Double
        @NullWhenAbsent var affectedSessionRate: Double? = nil

        init(_ estimate: NetworkWeighting.Estimate) {
            networks = estimate.networks
            boundedNetworks = estimate.boundedNetworks
            sessions = estimate.sessions
            affectedSessions = estimate.affected
            affectedSessionRate = estimate.rate
        }

        enum CodingKeys: String, CodingKey {
            case networks, sessions
            case boundedNetworks = "bounded_networks"
            case affectedSessions = "affected_sessions"
            case affectedSessionRate = "affected_session_rate"
        }
    }

    struct Interval: Encodable, Equatable {
        var lower: Double
        /// `null`: unbounded (nothing affected in the base).
        @NullWhenAbsent var upper: Double? = nil
    }

    var base: Side
    var target: Side
    /// Which interval `interval` and `verdict` read.
    var method: IntervalMethod = .fixed
    /// Affected-session rate, target / base; `null` when the base rate is 0 or a side has no sessions.
    @NullWhenAbsent var ratio: Double? = nil
    @NullWhenAbsent var interval: Interval? = nil
    /// `improved`, `regressed`, `no_change`, `unreliable` (the sessions are too concentrated to
    /// act on: `VerdictReliability`), or `null` when a side has no sessions.
    @NullWhenAbsent var verdict: String? = nil
    /// What the interval alone says (`improved`, `regressed`, `no_change`), reliable or not:
    /// an `unreliable` verdict keeps it here, so that a regression the robust estimate sees is
    /// never silenced by who sent the sessions (alerts, the gate and the guard read it).
    @NullWhenAbsent var intervalVerdict: String? = nil
    /// Reports per 1,000 sessions, target / base: the secondary figure; `null` when the base has none.
    @NullWhenAbsent var reportRateRatio: Double? = nil
    /// Why `ratio`/`verdict` are `null`, when they are.
    @NullWhenAbsent var reason: String? = nil

    static let z = 1.959963984540054

    init(base: Side, target: Side, method: IntervalMethod = .fixed) {
        self.base = base
        self.target = target
        self.method = method
        guard base.sessions > 0, target.sessions > 0 else {
            reason = "no session starts recorded for the \(base.sessions == 0 ? "base" : "target"): rates need them as denominator"
            return
        }
        let p1 = target.rate, p2 = base.rate
        if p2 > 0 { ratio = p1 / p2 }
        if base.reports > 0 {
            reportRateRatio = (Double(target.reports) / Double(target.sessions)) / (Double(base.reports) / Double(base.sessions))
        }
        let interval = switch method {
        case .fixed: Self.moverR(target: target.effective, base: base.effective)
        case .sequential: SequentialInterval.ratio(target: target.effective, base: base.effective)
        }
        self.interval = interval
        if let upper = interval.upper, upper < 1 {
            verdict = "improved"
        } else if interval.lower > 1 {
            verdict = "regressed"
        } else {
            verdict = "no_change"
        }
        intervalVerdict = verdict
        if base.affectedSessions == 0, target.affectedSessions == 0 { reason = "no affected sessions on either side" }
    }

    /// The same figures without a ratio, interval or verdict, and why.
    func withheld(_ why: String) -> SessionComparison {
        var copy = self
        copy.ratio = nil
        copy.interval = nil
        copy.verdict = nil
        copy.intervalVerdict = nil
        copy.reportRateRatio = nil
        copy.reason = why
        return copy
    }

    static let partialHistoryReason = "rebuilt on upgrade from raw rows that retention had partly deleted: this breakdown undercounts and is not compared"

    /// Wilson score interval of x / n (n > 0).
    static func wilson(_ x: Double, _ n: Double) -> (lower: Double, upper: Double) {
        let p = x / n, z2 = z * z
        let centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        let half = z / (1 + z2 / n) * (p * (1 - p) / n + z2 / (4 * n * n)).squareRoot()
        return (max(0, centre - half), min(1, centre + half))
    }

    /// MOVER-R (Donner & Zou 2012) for p₁/p₂ from the two Wilson intervals.
    static func moverR(target: (x: Double, n: Double), base: (x: Double, n: Double)) -> Interval {
        let p1 = target.x / target.n, p2 = base.x / base.n
        let (l1, u1) = wilson(target.x, target.n)
        let (l2, u2) = wilson(base.x, base.n)
        let product = p1 * p2
        let lowerDenominator = u2 * (2 * p2 - u2)
        let lower = lowerDenominator == 0 ? 0
            : (product - max(0, product * product - l1 * u2 * (2 * p1 - l1) * (2 * p2 - u2)).squareRoot()) / lowerDenominator
        let upperDenominator = l2 * (2 * p2 - l2)
        let upper: Double? = upperDenominator <= 0 ? nil
            : (product + max(0, product * product - u1 * l2 * (2 * p1 - u1) * (2 * p2 - l2)).squareRoot()) / upperDenominator
        return Interval(lower: max(0, lower), upper: upper)
    }

    enum CodingKeys: String, CodingKey {
        case base, target, ratio, interval, verdict, reason
        case method = "interval_method"
        case reportRateRatio = "report_rate_ratio"
        case intervalVerdict = "interval_verdict"
    }
}

extension SessionComparison: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("base", base)
            json.member("interval", interval)
            json.member("interval_method", method.rawValue)
            json.member("interval_verdict", intervalVerdict)
            json.member("ratio", ratio)
            json.member("reason", reason)
            json.member("report_rate_ratio", reportRateRatio)
            json.member("target", target)
            json.member("verdict", verdict)
        }
    }
}

extension SessionComparison.Side: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("affected_session_rate", affectedSessionRate)
            json.member("affected_sessions", affectedSessions)
            json.member("design_effect", designEffect)
            json.member("flooded_reports", floodedReports)
            json.member("reports", reports)
            json.member("reports_per_1k_sessions", reportsPer1kSessions)
            json.member("sessions", sessions)
            json.member("weighting", weighted.map { SessionComparison.WeightingView($0) })
        }
    }
}

extension SessionComparison.WeightingView: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("affected_session_rate", affectedSessionRate)
            json.member("affected_sessions", affectedSessions)
            json.member("bounded_networks", boundedNetworks)
            json.member("networks", networks)
            json.member("sessions", sessions)
        }
    }
}

extension SessionComparison.Interval: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("lower", lower)
            json.member("upper", upper)
        }
    }
}

