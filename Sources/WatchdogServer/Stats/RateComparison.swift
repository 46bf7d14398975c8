/// The verdict of `compare` and `cohorts` on plain counts, for programs outside the server
/// (`Tests/Benchmarks/sequential`, which simulates looking at A/A releases every day): the
/// same design effect, intervals and verdict as the routes, from the same code.
public enum RateComparison {
    /// One side: its installs as (sessions, affected sessions) clusters.
    public struct Side: Sendable {
        public var clusters: [(sessions: Int, affected: Int)]

        public init(clusters: [(sessions: Int, affected: Int)]) {
            self.clusters = clusters
        }

        var comparisonSide: SessionComparison.Side {
            let sessions = clusters.reduce(0) { $0 + $1.sessions }
            let affected = clusters.reduce(0) { $0 + min($1.affected, $1.sessions) }
            return SessionComparison.Side(sessions: sessions, affectedSessions: affected, reports: 0, floodedReports: 0,
                                          designEffect: InstallClusters.designEffect(sessions: sessions, affected: affected, sums: InstallClusters.sums(clusters)))
        }
    }

    /// What a comparison of the two sides says.
    public struct Outcome: Sendable {
        /// `improved`, `regressed`, `no_change`, or `nil` when a side has no sessions.
        public var verdict: String?
        public var lower: Double?
        public var upper: Double?
    }

    public static func compare(base: Side, target: Side, method: IntervalMethod) -> Outcome {
        let comparison = SessionComparison(base: base.comparisonSide, target: target.comparisonSide, method: method)
        return Outcome(verdict: comparison.verdict, lower: comparison.interval?.lower, upper: comparison.interval?.upper)
    }
}
