import Foundation

/// Sample ratio mismatch (issue 42): whether the share of a release's installs — and of their
/// sessions — that a percentage rule matched is the share it was configured to match.
///
/// The split itself cannot be off: the server picks the cohorts by the same salted hash of
/// `install_id` the config uses. What can be off is who shows up: installs of one cohort that
/// crash before they upload, stop sending, or were never real (install ids a forger chose to
/// land in one cohort), and sessions that one cohort starts more often (a switch that makes the
/// app restart). Either means the cohorts no longer stand for the same people, and their
/// comparison stops meaning what it says — so a mismatch is shown and holds a rollout's guard
/// (`RolloutMachine`), as Eppo and Statsig hold an experiment.
///
/// - Installs: Pearson's chi-square goodness of fit of matched against not matched with the
///   configured share, 1 degree of freedom, among the installs the rule could pick from (its
///   builds, channels and idioms; `ConfigRule.eligibleIgnoringVersion`).
/// - Sessions: the same question for sessions, which come in clusters (one install, many
///   sessions), so not Pearson's statistic on session counts: under a fair split each install
///   is matched with probability p whatever its sessions, so M − pS (M matched sessions of S)
///   has variance p(1 − p)·Σ sᵢ², and (M − pS)² / (p(1 − p)·Σ sᵢ²) is chi-square with 1 degree
///   of freedom — with one session per install, the installs' statistic.
///
/// A mismatch is p < 0.001 on either, as Eppo and Statsig use. No test below 5 expected
/// installs in either cohort, or for a rule of 0 % or 100 %.
struct SampleRatio: Codable, Equatable, Sendable {
    /// One unit counted: installs or sessions.
    struct Share: Codable, Equatable, Sendable {
        /// In the cohort the rule matched.
        var matched: Int
        /// That the rule could have matched (matched or not).
        var eligible: Int
        /// `matched / eligible`; `nil` without any.
        var share: Double?
        /// The chi-square statistic (1 degree of freedom); `nil` when not tested.
        var statistic: Double?
        /// Its p-value; `nil` when not tested.
        var p: Double?
    }

    /// The configured share (the rule's percent / 100).
    var expected: Double
    var installs: Share
    var sessions: Share
    /// p < `threshold` on installs or sessions.
    var mismatch: Bool
    /// Why nothing was tested, or what is off.
    var reason: String?

    /// Below this p-value the split is called a mismatch.
    static let threshold = 0.001
    /// Fewer expected installs than this in either cohort: not tested (the chi-square
    /// approximation needs about five).
    static let minimumExpected = 5.0

    /// - Parameters:
    ///   - percent: the rule's `match.percent`.
    ///   - eligible: each install the rule could pick: whether it matched, and its sessions.
    init(percent: Double, eligible: [(matched: Bool, sessions: Int)]) {
        let expected = min(1, max(0, percent / 100))
        self.expected = expected
        let matchedInstalls = eligible.filter(\.matched)
        let sessionTotal = eligible.reduce(0) { $0 + max(0, $1.sessions) }
        let matchedSessions = matchedInstalls.reduce(0) { $0 + max(0, $1.sessions) }
        installs = Share(matched: matchedInstalls.count, eligible: eligible.count,
                         share: eligible.isEmpty ? nil : Double(matchedInstalls.count) / Double(eligible.count))
        sessions = Share(matched: matchedSessions, eligible: sessionTotal, share: sessionTotal == 0 ? nil : Double(matchedSessions) / Double(sessionTotal))
        mismatch = false
        guard expected > 0, expected < 1 else {
            reason = "a rule of \(Self.percentText(percent)) matches every install it can or none: no split to check"
            return
        }
        let count = Double(eligible.count)
        guard count * expected >= Self.minimumExpected, count * (1 - expected) >= Self.minimumExpected else {
            reason = "too few installs to check the split: \(eligible.count), and each cohort needs \(Int(Self.minimumExpected)) expected"
            return
        }
        let installStatistic = pow(Double(matchedInstalls.count) - count * expected, 2) / (count * expected * (1 - expected))
        installs.statistic = installStatistic
        installs.p = Self.chiSquarePValue(installStatistic)
        let squares = eligible.reduce(0.0) { $0 + pow(Double(max(0, $1.sessions)), 2) }
        if squares > 0 {
            let sessionStatistic = pow(Double(matchedSessions) - Double(sessionTotal) * expected, 2) / (expected * (1 - expected) * squares)
            sessions.statistic = sessionStatistic
            sessions.p = Self.chiSquarePValue(sessionStatistic)
        }
        var off: [String] = []
        for (name, share) in [("installs", installs), ("sessions", sessions)] {
            guard let p = share.p, p < Self.threshold, let observed = share.share else { continue }
            off.append("\(Self.percentText(observed * 100)) of \(name) matched (\(share.matched) of \(share.eligible)) where the rule picks \(Self.percentText(percent)), p = \(String(format: "%.1e", p))")
        }
        mismatch = !off.isEmpty
        if mismatch { reason = "sample ratio mismatch: " + off.joined(separator: "; ") }
    }

    /// P(X > statistic) for X chi-square with 1 degree of freedom: erfc(√(x/2)).
    static func chiSquarePValue(_ statistic: Double) -> Double {
        erfc((max(0, statistic) / 2).squareRoot())
    }

    private static func percentText(_ percent: Double) -> String {
        String(format: "%.1f %%", percent)
    }
}
