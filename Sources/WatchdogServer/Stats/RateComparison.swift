import WatchdogStore

/// The verdict of `compare` and `cohorts` on plain counts, for programs outside the server
/// (`Tests/Benchmarks/sequential`, which simulates looking at A/A releases every day): the
/// same network weighting, intervals and verdict as the routes, from the same code.
public enum RateComparison {
    /// One side: its installs, each with the network it came from.
    public struct Side: Sendable {
        public var installs: [(network: Int, sessions: Int, affected: Int)]

        public init(installs: [(network: Int, sessions: Int, affected: Int)]) {
            self.installs = installs
        }

        func comparisonSide(_ bounds: NetworkWeighting.Bounds) -> SessionComparison.Side {
            let rows = installs.enumerated().map { index, install in
                InstallRow(installID: String(index), network: String(install.network), sessions: install.sessions, affectedSessions: install.affected)
            }
            let sessions = installs.reduce(0) { $0 + $1.sessions }
            let affected = installs.reduce(0) { $0 + min($1.affected, $1.sessions) }
            return SessionComparison.Side(sessions: sessions, affectedSessions: affected, reports: 0, floodedReports: 0,
                                          weighted: NetworkSide(rows, bounds: bounds).overall)
        }
    }

    /// What a comparison of the two sides says.
    public struct Outcome: Sendable {
        /// `improved`, `regressed`, `no_change`, or `nil` when a side has no sessions.
        public var verdict: String?
        public var lower: Double?
        public var upper: Double?
        public var ratio: Double?
    }

    /// `bounds`: the verdicts' own unless a program tries others.
    public static func compare(base: Side, target: Side, method: IntervalMethod, bounds: NetworkWeighting.Bounds = .verdicts) -> Outcome {
        let comparison = SessionComparison(base: base.comparisonSide(bounds), target: target.comparisonSide(bounds), method: method)
        return Outcome(verdict: comparison.verdict, lower: comparison.interval?.lower, upper: comparison.interval?.upper, ratio: comparison.ratio)
    }
}
