import Foundation

/// One network counts as one network (issue 39): the affected-session rate of one side of a
/// comparison, estimated from per-network contributions whose weight is bounded, with a
/// variance clustered by network. The caps of admission bound how *fast* a network adds
/// sessions; this bounds how much its sessions *weigh*, so that k networks of a holder of the
/// public ingest key move a verdict about as much as k testers would.
///
/// A side is a list of networks (IPv4 /24, IPv6 /48: where each install's first counted session
/// of the release came from), each a list of installs with sessions nᵢ and affected sessions
/// xᵢ ≤ nᵢ; an install whose network is unknown is a network of its own, and the side's
/// sessions without an install id are one network together. Then, with q = `weightQuantile`:
///
/// 1. **Installs.** c_I = max(1, the q-quantile of the side's nᵢ); an install with nᵢ > c_I
///    counts as c_I sessions, its affected scaled alike (wᵢ = c_I / nᵢ).
/// 2. **Networks.** Nᵍ = Σ wᵢnᵢ and Xᵍ = Σ wᵢxᵢ over its installs; c_N = max(1, the q-quantile
///    of the side's Nᵍ); a network with Nᵍ > c_N counts as c_N sessions, Xᵍ scaled alike.
/// 3. **Affected.** A network's affected sessions count at most max(1, κ·p·Nᵍ) (κ =
///    `affectedFactor`, p the side's rate from these bounded counts, found by iterating to its
///    fixed point): one glitching session is always believed, more than κ times the side's
///    rate is not. This is what keeps 20 networks posting only glitching sessions (or only
///    glitch-free ones, through step 2) from carrying a side: each weighs what one tester with
///    one glitching session (or one typical network's sessions) weighs.
/// 4. p = ΣX / ΣN over the bounded counts; its variance clustered by network (m networks):
///    V = m / (m − 1) · Σ (Xᵍ − p·Nᵍ)² / (ΣN)², deff = max(1, V / (p(1 − p) / ΣN)) — or, where it
///    cannot be estimated (fewer than two networks, p = 0 or 1), ΣN / m: each network one
///    observation. The intervals read x = ΣX / deff affected of n = ΣN / deff sessions.
///
/// Per kind, the weights of steps 1–2 are the side's (they depend on sessions only); step 3
/// uses the kind's own rate. Both sides of an A/A comparison are bounded the same way, so the
/// always-valid property holds for the bounded rate (`Tests/Benchmarks/sequential`); the cost is
/// in detection days (docs/statistics.md).
public enum NetworkWeighting {
    /// How a side is bounded.
    public struct Bounds: Sendable, Equatable {
        /// The quantile of a side's own installs and networks above which weight is bounded.
        public var weightQuantile: Double
        /// How far above the side's rate one network's affected sessions are believed.
        public var affectedFactor: Double
        /// The weight bound is at most this many times the side's median: a quantile is moved
        /// by whoever holds more than 1 − q of the networks, a median only by a majority.
        public var medianFactor: Double

        public init(weightQuantile: Double, affectedFactor: Double, medianFactor: Double) {
            self.weightQuantile = weightQuantile
            self.affectedFactor = affectedFactor
            self.medianFactor = medianFactor
        }

        /// The bound of a side's `sizes`: the `weightQuantile` of them, at most `medianFactor`
        /// times their median, at least 1.
        func cap(_ sizes: [Double]) -> Double {
            max(1, min(NetworkWeighting.quantile(sizes, weightQuantile), medianFactor * NetworkWeighting.quantile(sizes, 0.5)))
        }

        /// What verdicts use: the 90th percentile, at most twice the median, four times the
        /// side's rate (`Tests/Benchmarks/sequential`: 2.1 % of A/A pairs ever wrong in 30 daily
        /// looks; 3× gave 4.5 %, too near 5 %; the 95th percentile let 22 networks through its
        /// bound, where this takes 37).
        public static let verdicts = Bounds(weightQuantile: 0.9, affectedFactor: 4, medianFactor: 2)
    }

    /// One install's counts.
    struct Install: Sendable, Equatable {
        var sessions: Int
        var affected: Int
    }

    /// A side's networks, each its installs, with the weights of steps 1–2 worked out once.
    struct Side: Sendable {
        /// Per network, its bounded sessions Nᵍ, and the weight of each of its installs' counts (wᵢ times the network's own).
        private(set) var sessions: [Double] = []
        private(set) var weights: [[Double]] = []
        private(set) var boundedNetworks = 0

        /// How weights and affected sessions are bounded (steps 1–3); `nil`: not at all, the side
        /// is its clusters as they are, as before network weighting.
        let bounds: Bounds?

        /// `networks`: each network's installs' sessions (the install order is kept for `estimate`).
        init(networks: [[Int]], bounds: Bounds? = .verdicts) {
            self.bounds = bounds
            let all = networks.flatMap { $0 }.filter { $0 > 0 }.map(Double.init)
            let installCap = bounds?.cap(all) ?? .infinity
            var sums: [Double] = [], installWeights: [[Double]] = []
            for installs in networks {
                let w = installs.map { $0 > 0 ? min(1, installCap / Double($0)) : 0 }
                installWeights.append(w)
                sums.append(zip(installs, w).reduce(0) { $0 + Double($1.0) * $1.1 })
            }
            let networkCap = bounds?.cap(sums.filter { $0 > 0 }) ?? .infinity
            for (index, sum) in sums.enumerated() where sum > 0 {
                let scale = min(1, networkCap / sum)
                if scale < 1 || installWeights[index].contains(where: { $0 < 1 && $0 > 0 }) { boundedNetworks += 1 }
                sessions.append(sum * scale)
                weights.append(installWeights[index].map { $0 * scale })
            }
            keptNetworks = sums.map { $0 > 0 }
        }

        /// Which of the networks given had sessions (the others are left out).
        private var keptNetworks: [Bool] = []

        /// The estimate for affected counts laid out as the networks given to `init` (per
        /// install, in the same order; each at most that install's sessions).
        func estimate(affected: [[Int]]) -> Estimate {
            var raw: [Double] = []
            var kept = 0
            for (index, installs) in affected.enumerated() where index < keptNetworks.count && keptNetworks[index] {
                let w = weights[kept]
                raw.append(zip(installs, w).reduce(0) { $0 + Double($1.0) * $1.1 })
                kept += 1
            }
            return NetworkWeighting.estimate(sessions: sessions, affected: raw, boundedNetworks: boundedNetworks, affectedFactor: bounds?.affectedFactor)
        }
    }

    /// The bounded rate of one side and what its interval reads.
    struct Estimate: Sendable, Equatable {
        /// Networks with sessions, and those whose weight or affected sessions were bounded.
        var networks = 0
        var boundedNetworks = 0
        /// ΣN and ΣX: the side's sessions and affected sessions as they weigh.
        var sessions = 0.0
        var affected = 0.0
        /// ΣX / ΣN; nil without sessions.
        var rate: Double?
        /// ≥ 1: the variance clustered by network against the binomial one.
        var designEffect = 1.0

        /// Affected and sessions at the effective sample size.
        var effective: (x: Double, n: Double) { (affected / designEffect, sessions / designEffect) }
    }

    /// Steps 3–4 for bounded network sessions and (weighted, not yet capped) affected sessions.
    static func estimate(sessions: [Double], affected weighted: [Double], boundedNetworks: Int, affectedFactor: Double?) -> Estimate {
        let total = sessions.reduce(0, +)
        guard total > 0 else { return Estimate() }
        let raw = zip(weighted, sessions).map { min($0, $1) }
        var capped = raw
        var rate = raw.reduce(0, +) / total
        // The cap falls with the rate and the rate with the cap: a decreasing sequence, which
        // settles within a few rounds.
        for _ in 0..<(affectedFactor == nil ? 0 : 100) {
            let factor = affectedFactor ?? 1
            capped = zip(raw, sessions).map { x, n in min(x, max(1, factor * rate * n)) }
            let next = capped.reduce(0, +) / total
            if abs(next - rate) <= 1e-12 * max(rate, 1e-12) { rate = next; break }
            rate = next
        }
        let bounded = boundedNetworks + zip(raw, capped).count { $0 > $1 + 1e-9 }
        let affected = capped.reduce(0, +)
        let m = Double(sessions.count)
        var designEffect = total / m
        if rate > 0, rate < 1, sessions.count > 1 {
            let spread = zip(capped, sessions).reduce(0) { $0 + ($1.0 - rate * $1.1) * ($1.0 - rate * $1.1) }
            let variance = m / (m - 1) * spread / (total * total)
            designEffect = variance / (rate * (1 - rate) / total)
        }
        return Estimate(networks: sessions.count, boundedNetworks: bounded, sessions: total, affected: affected, rate: rate,
                        designEffect: max(1, designEffect.isFinite ? designEffect : 1))
    }

    /// The q-quantile of `values` (linear between order statistics, type 7); 0 of none.
    static func quantile(_ values: [Double], _ q: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let position = Double(sorted.count - 1) * q
        let lower = Int(position.rounded(.down)), upper = min(lower + 1, sorted.count - 1)
        return sorted[lower] + (position - Double(lower)) * (sorted[upper] - sorted[lower])
    }
}
