import Foundation

/// Which interval a comparison's verdict reads.
public enum IntervalMethod: String, Sendable, CaseIterable, Encodable {
    /// The fixed-sample 95 % interval (Wilson per side, MOVER-R for the ratio): right when the
    /// comparison is looked at once, at a sample size chosen in advance.
    case fixed
    /// An always-valid 95 % interval: it holds at every look at once, so a release manager
    /// who checks daily and acts on the first `regressed` is wrong at most 5 % of the time.
    case sequential

    /// `interval=` of a query: `fixed` (the default where none is given) or `sequential`.
    static func parse(_ text: String?, default fallback: IntervalMethod) throws(APIError) -> IntervalMethod {
        guard let text else { return fallback }
        guard let method = IntervalMethod(rawValue: text) else {
            throw .badRequest("bad_parameter", "interval=\(text.prefix(40)) is not an interval: use interval=sequential (always valid, for repeated looks) or interval=fixed (one look)")
        }
        return method
    }
}

/// The always-valid interval of `IntervalMethod.sequential`: a normal-mixture confidence
/// sequence (Robbins 1970; the mixture SPRT of Johari et al., *Always Valid Inference*, 2017,
/// §4; Howard et al. 2021, eq. 14) on the log of the ratio of affected-session rates.
///
/// With each side's effective counts (x / deff affected of n / deff sessions, deff the design
/// effect of clustering by install, as for the fixed interval) and half a session added to
/// each so that a side with no affected session still has a finite log:
///
///     p̃ᵢ = (xᵢ + ½) / (nᵢ + 1)
///     θ̂  = ln(p̃_target / p̃_base)                       the estimate of the log ratio
///     V   = (1 − p̃_t) / ((n_t + 1) p̃_t) + (1 − p̃_b) / ((n_b + 1) p̃_b)
///                                                        its variance (delta method)
///     h   = √( V (V + τ²) / τ² · ( ln((V + τ²) / V) + 2 ln(1/α) ) )
///     interval = [exp(θ̂ − h), exp(θ̂ + h)]               α = 0.05
///
/// `h` is where the likelihood ratio of θ against 0, averaged over a normal prior N(0, τ²) on
/// θ, reaches 1/α: by Ville's inequality that mixture martingale crosses 1/α at *any* look
/// with probability at most α, so the interval holds at every look at once (asymptotically,
/// as the normal approximation of θ̂ does). The price is width: at one look it is wider than
/// the fixed interval, and it narrows like √(V log(1/V)) instead of √V.
///
/// The mixing parameter τ sets where the sequence is tightest: about where V is τ²·(a few),
/// i.e. when the evidence is just enough to see an effect of size τ. τ = ln 1.5 — a 1.5×
/// change in glitch rate is the smallest a release manager acts on; the simulation in
/// `Tests/Benchmarks/sequential` measures detection days for 1.5× and 2× with it.
enum SequentialInterval {
    static let alpha = 0.05
    static let mixing = log(1.5)

    /// The interval for p_target / p_base from effective counts (n > 0 on both sides); the upper
    /// limit is `nil` (unbounded) when the base has no affected session, as for the fixed one.
    static func ratio(target: (x: Double, n: Double), base: (x: Double, n: Double)) -> SessionComparison.Interval {
        let pt = (target.x + 0.5) / (target.n + 1), pb = (base.x + 0.5) / (base.n + 1)
        let estimate = log(pt / pb)
        let variance = (1 - pt) / ((target.n + 1) * pt) + (1 - pb) / ((base.n + 1) * pb)
        let half = halfWidth(variance: variance)
        return SessionComparison.Interval(lower: exp(estimate - half), upper: base.x > 0 ? exp(estimate + half) : nil)
    }

    /// h for a variance V of the estimate (V > 0).
    static func halfWidth(variance: Double, mixing tau: Double = mixing, alpha: Double = alpha) -> Double {
        let tau2 = tau * tau
        let v = max(variance, 1e-300)
        return (v * (v + tau2) / tau2 * (log((v + tau2) / v) + 2 * log(1 / alpha))).squareRoot()
    }
}
