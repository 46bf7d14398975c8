/// Where a release's sessions really are: from the hour by which 1 % of its session starts
/// had arrived to the hour by which all but 1 % had — so that one session dated 2007 (the
/// oldest date validation accepts) or a day ahead moves neither the overlay's alignment nor a
/// cut time series' window.
///
/// 1 %, and at least 5 sessions (10 % of a release with fewer than 50): a real release's
/// first hour holds its testers' first sessions, so the threshold lands within hours of the
/// rollout, while moving it takes that many outlying sessions — each of which costs what
/// any plausible session costs (docs/security.md, "Time").
struct SessionBulk: Equatable {
    /// Hours since the epoch, UTC.
    var start: Int64
    var end: Int64
    var total: Int

    static let quantile = 0.01
    static let minimumSessions = 5

    /// Sessions that must have started before the bulk begins (and may start after it ends).
    static func threshold(total: Int) -> Int {
        max(Int((Double(total) * quantile).rounded(.up)), min(minimumSessions, (total + 9) / 10))
    }

    /// From session starts per hour, in any order; `nil` without any.
    init?(_ rows: [(hour: Int64, sessions: Int)]) {
        let sorted = rows.filter { $0.sessions > 0 }.sorted { $0.hour < $1.hour }
        let total = sorted.reduce(0) { $0 + $1.sessions }
        guard total > 0 else { return nil }
        let threshold = Self.threshold(total: total)
        var cumulative = 0
        var start: Int64?, end: Int64 = sorted[sorted.count - 1].hour
        for row in sorted {
            cumulative += row.sessions
            if start == nil, cumulative >= threshold { start = row.hour }
            if cumulative >= total - threshold + 1 {
                end = row.hour
                break
            }
        }
        self.start = start ?? end
        self.end = end
        self.total = total
    }

    /// The first bucket of a window of `maximum` buckets inside `first...last` that keeps the
    /// bulk's buckets `bulk`: from the bulk's start (or the range's latest `maximum` when those
    /// hold it), or the bulk's latest `maximum` when it is longer.
    static func windowStart(first: Int64, last: Int64, bulk: ClosedRange<Int64>, maximum: Int64) -> Int64 {
        guard last - first + 1 > maximum else { return first }
        let start = max(min(bulk.lowerBound, last - maximum + 1), bulk.upperBound - maximum + 1)
        return min(max(start, first), last - maximum + 1)
    }
}
