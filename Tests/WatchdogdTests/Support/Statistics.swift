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

    /// Ratio target/base of affected-session rates with its 95 % interval; `upper` nil when unbounded.
    static func comparison(target x1: Double, of n1: Double, base x2: Double, of n2: Double) -> (ratio: Double?, lower: Double, upper: Double?) {
        let p1 = x1 / n1, p2 = x2 / n2
        let (l1, u1) = wilson(x1, n1), (l2, u2) = wilson(x2, n2)
        let lower = (p1 * p2 - sqrt(max(0, pow(p1 * p2, 2) - l1 * u2 * (2 * p1 - l1) * (2 * p2 - u2)))) / (u2 * (2 * p2 - u2))
        let upper: Double? = x2 == 0 ? nil : (p1 * p2 + sqrt(max(0, pow(p1 * p2, 2) - u1 * l2 * (2 * p1 - u1) * (2 * p2 - l2)))) / (l2 * (2 * p2 - l2))
        return (p2 > 0 ? p1 / p2 : nil, max(0, lower), upper)
    }

    static func rounded(_ value: Double?) -> Double? { value.map { ($0 * 1000).rounded() / 1000 } }

    /// A number of a JSON object at 3 decimals.
    static func rounded(_ value: Any?) -> Double? { rounded(value as? Double) }
}
