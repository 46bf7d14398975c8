import Foundation

/// Counts per session in two releases, and how they compare: the rate ratio target/base with
/// a 95 % interval by the log method (Poisson counts, sessions as exposure):
///
///     ratio = (a / Nt) / (b / Nb),   SE(ln ratio) = √(1/a + 1/b),   ln ratio ± 1.96 · SE
///
/// When a count is 0, 0.5 is added to both counts for the interval (Haldane–Anscombe), so a
/// kind that vanished gets a finite upper bound instead of a division by zero. The verdict
/// reads the interval: entirely below 1 `improved`, above 1 `regressed`, otherwise `no_change`.
struct RateComparison: Encodable, Equatable {
    struct Side: Encodable, Equatable {
        var reports: Int
        var sessions: Int
        /// `null` without sessions.
        @NullWhenAbsent var reportsPer1kSessions: Double? = nil

        enum CodingKeys: String, CodingKey {
            case reports, sessions
            case reportsPer1kSessions = "reports_per_1k_sessions"
        }
    }

    struct Interval: Encodable, Equatable {
        var lower: Double
        var upper: Double
    }

    var base: Side
    var target: Side
    /// `null` when the base rate is 0 (the ratio is infinite or undefined) or a side has no sessions.
    @NullWhenAbsent var ratio: Double? = nil
    @NullWhenAbsent var interval: Interval? = nil
    /// `improved`, `regressed`, `no_change`, or `null` when rates cannot be computed.
    @NullWhenAbsent var verdict: String? = nil
    /// Set when the interval used the zero-count correction.
    @NullWhenAbsent var correction: String? = nil
    /// Why `ratio`/`verdict` are `null`, when they are.
    @NullWhenAbsent var reason: String? = nil

    static let z = 1.959963984540054

    init(base: Int, baseSessions: Int, target: Int, targetSessions: Int) {
        self.base = Side(reports: base, sessions: baseSessions,
                         reportsPer1kSessions: baseSessions > 0 ? Double(base) * 1000 / Double(baseSessions) : nil)
        self.target = Side(reports: target, sessions: targetSessions,
                           reportsPer1kSessions: targetSessions > 0 ? Double(target) * 1000 / Double(targetSessions) : nil)
        guard baseSessions > 0, targetSessions > 0 else {
            reason = "no session starts recorded for the \(baseSessions == 0 ? "base" : "target") release: rates need them as denominator"
            return
        }
        if base > 0 {
            ratio = (Double(target) / Double(targetSessions)) / (Double(base) / Double(baseSessions))
        }
        var a = Double(target), b = Double(base)
        if target == 0 || base == 0 {
            a += 0.5
            b += 0.5
            correction = "a count is 0: 0.5 added to both counts for the interval"
        }
        let logRatio = log((a / Double(targetSessions)) / (b / Double(baseSessions)))
        let standardError = (1 / a + 1 / b).squareRoot()
        let interval = Interval(lower: exp(logRatio - Self.z * standardError), upper: exp(logRatio + Self.z * standardError))
        self.interval = interval
        verdict = interval.upper < 1 ? "improved" : interval.lower > 1 ? "regressed" : "no_change"
    }

    enum CodingKeys: String, CodingKey {
        case base, target, ratio, interval, verdict, correction, reason
    }
}
