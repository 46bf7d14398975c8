import Foundation

/// The comparison README documents, written again here so the server's figures are checked
/// against an independent implementation: Wilson score intervals per side, combined into the
/// MOVER-R interval of the ratio (Donner & Zou 2012).
enum Statistics {
    static let z = 1.959963984540054

    static func wilson(_ x: Double, _ n: Double) -> (Double, Double) {
        let p = x / n
        let denominator = 1 + z * z / n
        let centre = p + z * z / (2 * n)
        let spread = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        return (max(0, (centre - spread) / denominator), min(1, (centre + spread) / denominator))
    }

    /// The design effect of clustering: `clusters` lists every cluster (an install, or a session
    /// of its own) as (sessions, affected sessions).
    static func designEffect(_ clusters: [(Double, Double)]) -> Double {
        let n = clusters.reduce(0) { $0 + $1.0 }, x = clusters.reduce(0) { $0 + $1.1 }, m = Double(clusters.count)
        let p = x / n
        // No variance to estimate: each cluster counts once.
        guard m > 1, p > 0, p < 1 else { return max(1, n / max(1, m)) }
        let robust = m / (m - 1) * clusters.reduce(0) { $0 + pow($1.1 - p * $1.0, 2) } / (n * n)
        return max(1, robust / (p * (1 - p) / n))
    }

    /// `x` of `n` sessions, each of its own install: the clusters of the design effect.
    static func singletons(_ x: Int, of n: Int) -> [(Double, Double)] {
        Array(repeating: (1.0, 1.0), count: x) + Array(repeating: (1.0, 0.0), count: n - x)
    }

    /// The comparison when every session has an install of its own.
    static func unclustered(target x1: Int, of n1: Int, base x2: Int, of n2: Int) -> (ratio: Double?, lower: Double, upper: Double?) {
        comparison(target: Double(x1), of: Double(n1), base: Double(x2), of: Double(n2),
                   targetDesignEffect: designEffect(singletons(x1, of: n1)), baseDesignEffect: designEffect(singletons(x2, of: n2)))
    }

    /// Ratio target/base of affected-session rates with its 95 % interval; `upper` nil when
    /// unbounded. Each side's Wilson interval is taken at n / deff (its design effect).
    static func comparison(target x1: Double, of n1: Double, base x2: Double, of n2: Double,
                           targetDesignEffect d1: Double = 1, baseDesignEffect d2: Double = 1) -> (ratio: Double?, lower: Double, upper: Double?) {
        let ratio: Double? = x2 > 0 ? (x1 / n1) / (x2 / n2) : nil
        let (x1, n1, x2, n2) = (x1 / d1, n1 / d1, x2 / d2, n2 / d2)
        let p1 = x1 / n1, p2 = x2 / n2
        let (l1, u1) = wilson(x1, n1), (l2, u2) = wilson(x2, n2)
        let lower = (p1 * p2 - sqrt(max(0, pow(p1 * p2, 2) - l1 * u2 * (2 * p1 - l1) * (2 * p2 - u2)))) / (u2 * (2 * p2 - u2))
        let upper: Double? = x2 == 0 ? nil : (p1 * p2 + sqrt(max(0, pow(p1 * p2, 2) - u1 * l2 * (2 * p1 - u1) * (2 * p2 - l2)))) / (l2 * (2 * p2 - l2))
        return (ratio, max(0, lower), upper)
    }

    static func rounded(_ value: Double?) -> Double? { value.map { ($0 * 1000).rounded() / 1000 } }

    /// A number of a JSON object at 3 decimals.
    static func rounded(_ value: Any?) -> Double? { rounded(value as? Double) }
}
