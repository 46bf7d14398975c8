// Looking every day: how often the fixed and the sequential interval call a difference that
// is not there, and how soon they see one that is. A simulation, not a timed test.
//
//   swift build -c release --product sequential-simulation
//   "$(swift build -c release --show-bin-path)/sequential-simulation"            # 2,000 A/A pairs, 500 per effect
//   ".../sequential-simulation" --pairs 200 --effect-pairs 100                    # quicker
//   ".../sequential-simulation" --quantile 0.95 --factor 4                        # other bounds (NetworkWeighting.Bounds)
//
// Each pair is two releases of a beta fleet drawn like the demo's: installs adopt the release
// over the first days (exponential, mean 4 days), start sessions at their own pace (lognormal,
// median 1.5 a day, 1 % heavy testers at about 100 a day), each install has its own glitch
// propensity (Beta(0.9, 9.1): 9 % of sessions affected on average, strongly clustered by
// install), and the plausibility rule of admission is on: an install's sessions past 20 an hour
// (160 a day over its 8 active hours) are held apart and never counted. The flood cap bounds
// reports, not affected sessions, so it cannot move these verdicts: it is not simulated.
// Networks: 70 % of the installs are testers at home, each on a /24 of its own; the other 30 %
// work in ten offices of 30 installs each (install i is in an office when i % 10 ≥ 7, office
// i / 100), so the weight bound of `NetworkWeighting` has offices to bound (`--home-share`
// moves the line: 0.2 puts 80 % of the testers in ten offices). Every day for 30
// days both releases are compared exactly as `GET …/compare` does (`RateComparison`: the same
// bounded network weighting, design effect clustered by network, same intervals).
//
// A/A pairs have the same propensities; "1.5×" and "2×" multiply the target's. Printed: the
// share of A/A pairs ever called `regressed` or `improved` in 30 daily looks, with each
// interval (the goal for the sequential one is ≤ 5 %), the same at the single look of day 30,
// and for the true regressions the median day each interval first says `regressed` (">30" when
// fewer than half were caught) and the share caught by day 30. The seed is fixed: the same
// build prints the same table.
import Foundation
import WatchdogServer
import WatchdogWire

struct Options {
    var pairs = 2_000
    var effectPairs = 500
    var installs = 1_000
    var days = 30
    var seed: UInt64 = 20_261_126
    var bounds = NetworkWeighting.Bounds.verdicts
    /// The share of installs testing at home, each on a /24 of its own; the others in offices.
    var homeShare = 0.7

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            guard let text = iterator.next(), let number = Double(text), number > 0 else {
                fatalError("usage: sequential-simulation [--pairs N] [--effect-pairs N] [--installs N] [--days N] [--seed N] [--quantile Q] [--factor K] [--median-factor M] [--home-share S]")
            }
            let value = Int(number)
            switch argument {
            case "--quantile": bounds.weightQuantile = number
            case "--factor": bounds.affectedFactor = number
            case "--median-factor": bounds.medianFactor = number
            case "--home-share": homeShare = number
            case "--pairs": pairs = value
            case "--effect-pairs": effectPairs = value
            case "--installs": installs = value
            case "--days": days = value
            case "--seed": seed = UInt64(value)
            default: fatalError("unknown option \(argument)")
            }
        }
    }
}

/// Random draws the fleet needs, on the repo's seeded generator.
struct Draws {
    var random: SeededGenerator

    mutating func unit() -> Double { max(random.unit(), 1e-300) }

    mutating func normal() -> Double {
        (-2 * log(unit())).squareRoot() * cos(2 * Double.pi * random.unit())
    }

    /// Marsaglia & Tsang (2000); shape < 1 through the boost U^(1/shape).
    mutating func gamma(_ shape: Double) -> Double {
        if shape < 1 { return gamma(shape + 1) * pow(unit(), 1 / shape) }
        let d = shape - 1.0 / 3, c = 1 / (9 * d).squareRoot()
        while true {
            let x = normal(), v = pow(1 + c * x, 3)
            if v > 0, log(unit()) < 0.5 * x * x + d - d * v + d * log(v) { return d * v }
        }
    }

    mutating func beta(_ a: Double, _ b: Double) -> Double {
        let x = gamma(a), y = gamma(b)
        return x / (x + y)
    }

    mutating func poisson(_ mean: Double) -> Int {
        if mean > 40 { return max(0, Int((mean + mean.squareRoot() * normal()).rounded())) }
        let limit = exp(-mean)
        var count = 0, product = random.unit()
        while product > limit { count += 1; product *= random.unit() }
        return count
    }

    mutating func binomial(_ trials: Int, _ p: Double) -> Int {
        var hits = 0
        for _ in 0..<trials where random.unit() < p { hits += 1 }
        return hits
    }
}

/// One release's installs over the days: sessions and affected sessions per install per day.
struct Fleet {
    static let sessionsPerDayCap = 160

    var daily: [[(sessions: Int, affected: Int)]]   // [day][install]

    init(installs: Int, days: Int, effect: Double, propensities: [Double], draws: inout Draws) {
        daily = Array(repeating: Array(repeating: (0, 0), count: installs), count: days)
        for install in 0..<installs {
            let adoption = Int(-4 * log(draws.unit()))
            let pace = draws.random.unit() < 0.01 ? 100 : 1.5 * exp(draws.normal())
            let propensity = min(1, propensities[install] * effect)
            for day in adoption..<max(adoption, days) {
                let sessions = min(Self.sessionsPerDayCap, draws.poisson(pace))
                daily[day][install] = (sessions, draws.binomial(sessions, propensity))
            }
        }
    }
}

struct PairOutcome {
    /// The first day (1-based) each interval said `regressed`, and said `improved`.
    var firstRegressed: [IntervalMethod: Int] = [:]
    var firstImproved: [IntervalMethod: Int] = [:]
    var lastDay: [IntervalMethod: String] = [:]
}

/// The installs with sessions, each with its network (see the top of this file).
func network(_ totals: [(sessions: Int, affected: Int)]) -> [(network: Int, sessions: Int, affected: Int)] {
    let home = Int((options.homeShare * 10).rounded())
    return totals.enumerated().filter { $0.element.sessions > 0 }.map { index, total in
        (index % 10 >= home ? 1_000_000 + index / 100 : index, total.sessions, total.affected)
    }
}

func simulatePair(effect: Double, options: Options, draws: inout Draws) -> PairOutcome {
    let propensities = (0..<options.installs).map { _ in draws.beta(0.9, 9.1) }
    // Both releases run on the same kind of fleet: the same propensity distribution, their own
    // installs' draws (installs differ between releases as they do in the field).
    let base = Fleet(installs: options.installs, days: options.days, effect: 1, propensities: propensities.shuffled(using: &draws.random), draws: &draws)
    let target = Fleet(installs: options.installs, days: options.days, effect: effect, propensities: propensities.shuffled(using: &draws.random), draws: &draws)
    var baseTotals = Array(repeating: (sessions: 0, affected: 0), count: options.installs)
    var targetTotals = baseTotals
    var outcome = PairOutcome()
    for day in 0..<options.days {
        for install in 0..<options.installs {
            baseTotals[install].sessions += base.daily[day][install].sessions
            baseTotals[install].affected += base.daily[day][install].affected
            targetTotals[install].sessions += target.daily[day][install].sessions
            targetTotals[install].affected += target.daily[day][install].affected
        }
        let baseSide = RateComparison.Side(installs: network(baseTotals))
        let targetSide = RateComparison.Side(installs: network(targetTotals))
        for method in IntervalMethod.allCases {
            let verdict = RateComparison.compare(base: baseSide, target: targetSide, method: method, bounds: options.bounds).verdict
            if verdict == "regressed", outcome.firstRegressed[method] == nil { outcome.firstRegressed[method] = day + 1 }
            if verdict == "improved", outcome.firstImproved[method] == nil { outcome.firstImproved[method] = day + 1 }
            if day == options.days - 1 { outcome.lastDay[method] = verdict ?? "none" }
        }
    }
    return outcome
}

func percent(_ count: Int, of total: Int) -> String {
    String(format: "%.1f %%", 100 * Double(count) / Double(max(1, total)))
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
var draws = Draws(random: SeededGenerator(seed: options.seed))
let started = Date()

let aa = (0..<options.pairs).map { _ in simulatePair(effect: 1, options: options, draws: &draws) }
var rows: [String] = []
for method in IntervalMethod.allCases {
    let ever = aa.filter { $0.firstRegressed[method] != nil || $0.firstImproved[method] != nil }.count
    let once = aa.filter { ["regressed", "improved"].contains($0.lastDay[method]) }.count
    rows.append("| \(method.rawValue) | \(percent(ever, of: aa.count)) | \(percent(once, of: aa.count)) |")
}
print("A/A: \(options.pairs) pairs of releases with the same glitch propensity, \(options.installs) installs each, looked at once a day for \(options.days) days (seed \(options.seed); "
      + "weight bounded at the \(options.bounds.weightQuantile) quantile, at most \(options.bounds.medianFactor)× the median, "
      + "affected sessions at \(options.bounds.affectedFactor)× the rate)")
print()
print("| interval | ever called regressed or improved in \(options.days) daily looks | called so at the single look of day \(options.days) |")
print("|---|---|---|")
rows.forEach { print($0) }
print()

print("True regressions: \(options.effectPairs) pairs each, the target's propensities multiplied")
print()
print("| effect | interval | median day first called regressed | caught by day \(options.days) |")
print("|---|---|---|---|")
for effect in [1.5, 2.0] {
    let pairs = (0..<options.effectPairs).map { _ in simulatePair(effect: effect, options: options, draws: &draws) }
    for method in IntervalMethod.allCases {
        let days = pairs.compactMap { $0.firstRegressed[method] }.sorted()
        let median = days.count * 2 > pairs.count ? String(days[(pairs.count - 1) / 2]) : ">\(options.days)"
        print("| \(effect)× | \(method.rawValue) | \(median) | \(percent(days.count, of: pairs.count)) |")
    }
}
print()

// The price of an attack (docs/security.md, "What a holder of the ingest key can do"): the fleet of
// `OneNetworkDaemonTests` — 400 installs on 400 networks per release, 3 sessions each, 6 % of
// sessions glitching against 12 % — and an attacker's networks at admission's caps for `hours`
// hours each: 20 new installs an hour, each starting 20 sessions an hour. Printed: the fewest
// networks that move the always-valid verdict, for each attack.
func honestFleet(glitching: Int, network offset: Int) -> [(network: Int, sessions: Int, affected: Int)] {
    (0..<400).map { (offset + $0, 3, $0 < glitching ? 1 : 0) }
}

func attackers(_ networks: Int, hours: Int, glitching: Bool) -> [(network: Int, sessions: Int, affected: Int)] {
    (0..<networks).flatMap { network in
        (0..<20 * hours).map { install in
            // An install made in hour h starts 20 sessions in each hour from h on.
            let sessions = 20 * (hours - install / 20)
            return (1_000_000 + network, sessions, glitching ? sessions : 0)
        }
    }
}

func verdict(base: [(network: Int, sessions: Int, affected: Int)], target: [(network: Int, sessions: Int, affected: Int)]) -> String {
    RateComparison.compare(base: RateComparison.Side(installs: base), target: RateComparison.Side(installs: target), method: .sequential,
                           bounds: options.bounds).verdict ?? "none"
}

let low = honestFleet(glitching: 72, network: 0), high = honestFleet(glitching: 144, network: 1_000)
let attacks: [(name: String, honest: String, attacked: (Int, Int) -> String)] = [
    ("glitching sessions into the base of a regressed pair", verdict(base: low, target: high),
     { verdict(base: low + attackers($0, hours: $1, glitching: true), target: high) }),
    ("glitching sessions into the target of an improved pair", verdict(base: high, target: low),
     { verdict(base: high, target: low + attackers($0, hours: $1, glitching: true)) }),
    ("glitch-free sessions into the target of a regressed pair", verdict(base: low, target: high),
     { verdict(base: low, target: high + attackers($0, hours: $1, glitching: false)) }),
    ("glitch-free sessions into the base of an improved pair", verdict(base: high, target: low),
     { verdict(base: high + attackers($0, hours: $1, glitching: false), target: low) }),
]
print("Attacks on 400 networks a release (6 % against 12 % of sessions glitching): the fewest networks at the caps that move the always-valid verdict")
print()
print("| attack | verdict | 1 hour each | 8 hours each |")
print("|---|---|---|---|")
for attack in attacks {
    let needed = [1, 8].map { hours in (1...200).first { attack.attacked($0, hours) != attack.honest }.map { "\($0) networks → \(attack.attacked($0, hours))" } ?? "> 200" }
    print("| \(attack.name) | \(attack.honest) | \(needed[0]) | \(needed[1]) |")
}
print()
print(String(format: "(%.1f s)", Date().timeIntervalSince(started)))
