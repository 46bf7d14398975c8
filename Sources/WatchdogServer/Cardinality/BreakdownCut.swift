/// The read side's bound: whatever the store holds (values stored before the caps existed, or
/// admitted by several nodes at once), a breakdown of `compare`, `cohorts` or `timeseries`
/// answers at most `limit` values — those with the most volume — and one `other` row summing
/// the rest, with how many values it sums (`other_values`). The folded spelling (`x-other`,
/// `(other)`) is always summed into that row, never ranked on its own, so an answer has one.
enum BreakdownCut {
    static let defaultLimit = 20
    static let maximumLimit = 500

    /// `limit=` of a breakdown route.
    static func limit(_ text: String?) throws(APIError) -> Int {
        try ReleaseLookup.limit(text, default: defaultLimit, maximum: maximumLimit)
    }

    /// Which of `values` are kept: the `limit` with the largest volume (ties by value), never
    /// `folded`. `nil` when everything is kept.
    static func kept(_ values: [String], volume: (Int) -> Int, limit: Int, folded: String) -> Set<Int>? {
        guard values.count > limit || values.contains(folded) else { return nil }
        let ranked = values.indices.filter { values[$0] != folded }
            .sorted { (volume($0), values[$1]) > (volume($1), values[$0]) }
        return Set(ranked.prefix(limit))
    }

    /// `rows` cut to the `limit` with the most affected sessions (then reports), in their
    /// order, and one `folded` row summing the others. Every row of a kind or screen breakdown
    /// has its side's sessions as denominator: the sum's is the same. A sum of several values
    /// can count a session once per value, so it has figures but no ratio or verdict; a single
    /// value left over stays its own row, as computed (verdict and marks included).
    static func cut(_ rows: [Breakdown], limit: Int, folded: String, designEffect: (base: Double, target: Double)) -> [Breakdown] {
        func volume(_ index: Int) -> Int {
            let comparison = rows[index].comparison
            return (comparison.base.affectedSessions + comparison.target.affectedSessions) * 1_000_000
                + min(999_999, comparison.base.reports + comparison.target.reports)
        }
        guard let kept = kept(rows.map(\.value), volume: volume, limit: limit, folded: folded) else { return rows }
        let rest = rows.indices.filter { !kept.contains($0) }.map { rows[$0].comparison }
        // One value left over: every row stays as computed (with its marks); the folded
        // value's says it is one.
        guard rest.count > 1, let first = rows.first else {
            return rows.map { Breakdown(value: $0.value, comparison: $0.comparison, otherValues: $0.value == folded ? 1 : nil) }
        }
        func sum(_ sides: [SessionComparison.Side], sessions: Int, designEffect: Double) -> SessionComparison.Side {
            SessionComparison.Side(sessions: sessions, affectedSessions: sides.reduce(0) { $0 + $1.affectedSessions },
                                   reports: sides.reduce(0) { $0 + $1.reports }, floodedReports: sides.reduce(0) { $0 + $1.floodedReports },
                                   designEffect: designEffect)
        }
        var comparison = SessionComparison(base: sum(rest.map(\.base), sessions: first.comparison.base.sessions, designEffect: designEffect.base),
                                           target: sum(rest.map(\.target), sessions: first.comparison.target.sessions, designEffect: designEffect.target),
                                           method: first.comparison.method)
        if let partial = rest.first(where: { $0.reason == SessionComparison.partialHistoryReason }) {
            comparison = comparison.withheld(partial.reason ?? "")
        } else {
            comparison = comparison.withheld("\(rest.count) values summed (past the top \(limit) by affected sessions, or folded at ingest): a session can count under several of them, so the sum is not compared")
        }
        return rows.indices.filter { kept.contains($0) }.map { rows[$0] } + [Breakdown(value: folded, comparison: comparison, otherValues: rest.count)]
    }

    /// A time series per kind cut to the `limit` kinds with the most reports over the range
    /// (headline, suspect and flooded), the others summed under `Folded.kind`; how many kinds
    /// were summed.
    static func cut(series: inout [String: [Int]], suspect: inout [String: [Int]], flooded: inout [String: [Int]], limit: Int) -> Int {
        let kinds = Array(series.keys)
        let totals = kinds.map { kind in [series, suspect, flooded].reduce(0) { $0 + ($1[kind]?.reduce(0, +) ?? 0) } }
        guard let kept = kept(kinds, volume: { totals[$0] }, limit: limit, folded: Folded.kind) else { return 0 }
        let summed = kinds.indices.filter { !kept.contains($0) }.map { kinds[$0] }
        func fold(_ table: inout [String: [Int]]) {
            guard let length = table.values.first?.count else { return }
            var other = Array(repeating: 0, count: length)
            for kind in summed {
                for (index, count) in (table.removeValue(forKey: kind) ?? []).enumerated() { other[index] += count }
            }
            table[Folded.kind] = other
        }
        fold(&series)
        fold(&suspect)
        fold(&flooded)
        return summed.count
    }
}

extension CompareView {
    /// Kinds and screens cut to `limit` values each (keyboard modes and idioms are closed
    /// vocabularies of six and five). What `compare` and `cohorts` answer; the alert rules
    /// read the whole comparison.
    mutating func cut(limit: Int) {
        let designEffect = (overall.base.designEffect, overall.target.designEffect)
        byKind = BreakdownCut.cut(byKind, limit: limit, folded: Folded.kind, designEffect: designEffect)
        byScreen = BreakdownCut.cut(byScreen, limit: limit, folded: Folded.value, designEffect: designEffect)
    }
}
