import Foundation
import Testing

/// `watchdogd gate` against a real daemon serving the demo (14.1.0 has about three times the
/// glitching sessions of 14.2.0), and the sequential interval behind it recomputed from the
/// formula README documents.
@Suite struct ReleaseGateTests {
    private func gate(_ daemon: Daemon, token: String?, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["WATCHDOG_TOKEN"] = token
        return try ChildProcess.run(Daemon.binary, ["gate", "--url", "http://127.0.0.1:\(daemon.port)", "--app", "com.example.mail"] + arguments,
                                    environment: environment, seconds: Daemon.commandSeconds)
    }

    @Test func gateExitsZeroOnPassOneOnFailTwoWhenNotYetAndThreeWhenItCannotAsk() throws {
        let daemon = try Daemon(demo: true)
        let viewer = try #require(daemon.exports["WATCHDOG_VIEWER_TOKEN"])

        let pass = try gate(daemon, token: viewer, ["--release", "14.2.0"])
        #expect(pass.status == 0, "\(pass)")
        #expect(pass.stdout.hasPrefix("**Watchdog gate: ✅ pass** — `14.2.0 (31245)` against `14.1.0 (31102)`"), "\(pass.stdout)")
        #expect(pass.stdout.contains("| sessions | 1,200 | 1,500 |") && pass.stdout.contains("**improved**"), "\(pass.stdout)")

        let fail = try gate(daemon, token: viewer, ["--release", "14.1.0", "--against", "14.2.0"])
        #expect(fail.status == 1, "\(fail)")
        #expect(fail.stdout.contains("❌ fail") && fail.stdout.contains("**regressed**"), "\(fail.stdout)")

        // Too few installs on a side: neither pass nor fail, even for a clear regression.
        let fewInstalls = try gate(daemon, token: viewer, ["--release", "14.1.0", "--against", "14.2.0", "--minimum-installs", "5000"])
        #expect(fewInstalls.status == 2, "\(fewInstalls)")
        #expect(fewInstalls.stdout.contains("installs of the 5000 needed"), "\(fewInstalls.stdout)")
        // A release that has not reported yet; its name is client text, shown as a code span.
        let unknown = try gate(daemon, token: viewer, ["--release", "15.0 [x](https://example.com)"])
        #expect(unknown.status == 2, "\(unknown)")
        #expect(unknown.stdout.contains("`15.0 [x](https://example.com)`") && unknown.stdout.contains("not yet"), "\(unknown.stdout)")
        // A regression of 1.01× or more ruled out: the demo's upper limit is about 0.46×.
        let strict = try gate(daemon, token: viewer, ["--release", "14.2.0", "--maximum-ratio", "1.01"])
        #expect(strict.status == 0, "the demo's upper limit is about 0.46×, below 1.01: \(strict)")
        let stricter = try gate(daemon, token: viewer, ["--release", "14.2.0", "--maximum-ratio", "1.01", "--minimum-sessions", "100000"])
        #expect(stricter.status == 2, "\(stricter)")

        let badToken = try gate(daemon, token: "wdv_nothing", ["--release", "14.2.0"])
        #expect(badToken.status == 3 && badToken.stdout.isEmpty && badToken.stderr.contains("HTTP 401"), "\(badToken)")
        let typo = try gate(daemon, token: viewer, ["--release", "14.2.0", "--against", "14.0.9"])
        #expect(typo.status == 3 && typo.stderr.contains("against=14.0.9"), "\(typo)")
        let noToken = try gate(daemon, token: nil, ["--release", "14.2.0"])
        #expect(noToken.status != 0 && noToken.status != 1 && noToken.status != 2, "\(noToken)")
        let nobody = try ChildProcess.run(Daemon.binary, ["gate", "--url", "http://127.0.0.1:1", "--app", "a", "--release", "1", "--token", "t"], seconds: Daemon.commandSeconds)
        #expect(nobody.status == 3, "\(nobody)")
    }

    @Test func sequentialIntervalIsTheDocumentedNormalMixtureAndContainsTheFixedOne() throws {
        let daemon = try Daemon(demo: true)
        let viewer = try #require(daemon.exports["WATCHDOG_VIEWER_TOKEN"])
        func comparison(_ query: String) throws -> [String: Any] {
            let response = try daemon.client.request("GET", "/v1/apps/com.example.mail/compare?base=14.1.0&target=14.2.0" + query, token: viewer)
            #expect(response.status == 200, "\(response.text)")
            return response.json
        }
        let sequential = try comparison("&interval=sequential"), fixed = try comparison("")
        #expect(sequential["interval_method"] as? String == "sequential" && fixed["interval_method"] as? String == "fixed")
        #expect(try comparison("&interval=fixed")["interval_method"] as? String == "fixed")
        #expect(try daemon.client.request("GET", "/v1/apps/com.example.mail/compare?base=14.1.0&target=14.2.0&interval=bayes", token: viewer).status == 400)

        let overall = try #require(sequential["overall"] as? [String: Any])
        let base = try #require(overall["base"] as? [String: Any]), target = try #require(overall["target"] as? [String: Any])
        // The side as it weighs (docs/statistics.md, "One network counts as one network"), at
        // its design effect by network.
        func effective(_ side: [String: Any]) -> (x: Double, n: Double) {
            let deff = side["design_effect"] as? Double ?? .nan
            let weighting = side["weighting"] as? [String: Any] ?? [:]
            return ((weighting["affected_sessions"] as? Double ?? .nan) / deff, (weighting["sessions"] as? Double ?? .nan) / deff)
        }
        // docs/release-health.md, "Always-valid verdicts": tau = ln 1.5, alpha = 0.05, half a session added per side.
        let (t, b) = (effective(target), effective(base))
        let pt = (t.x + 0.5) / (t.n + 1), pb = (b.x + 0.5) / (b.n + 1)
        let v = (1 - pt) / ((t.n + 1) * pt) + (1 - pb) / ((b.n + 1) * pb)
        let tau2 = log(1.5) * log(1.5)
        let h = sqrt(v * (v + tau2) / tau2 * (log((v + tau2) / v) + 2 * log(20.0)))
        let expected = (lower: exp(log(pt / pb) - h), upper: exp(log(pt / pb) + h))
        let interval = try #require(overall["interval"] as? [String: Any])
        let lower = try #require(interval["lower"] as? Double), upper = try #require(interval["upper"] as? Double)
        #expect(abs(lower - expected.lower) < 1e-9 * expected.lower && abs(upper - expected.upper) < 1e-9 * expected.upper,
                "served \(lower)–\(upper), formula \(expected)")
        #expect(overall["verdict"] as? String == (expected.upper < 1 ? "improved" : expected.lower > 1 ? "regressed" : "no_change"))

        // Valid at every look costs width: the fixed interval lies inside the sequential one.
        let fixedInterval = try #require((fixed["overall"] as? [String: Any])?["interval"] as? [String: Any])
        #expect(lower < fixedInterval["lower"] as? Double ?? 0 && upper > fixedInterval["upper"] as? Double ?? .infinity)

        // The gate reads the same interval.
        let gate = try daemon.client.request("GET", "/v1/apps/com.example.mail/gate?release=14.2.0", token: viewer).json
        let gateInterval = try #require(gate["interval"] as? [String: Any])
        #expect(gateInterval["lower"] as? Double == lower && gateInterval["upper"] as? Double == upper && gate["result"] as? String == "pass", "\(gate)")
    }
}
