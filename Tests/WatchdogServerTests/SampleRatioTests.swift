import Foundation
import Testing
@testable import WatchdogServer
import WatchdogTesting

/// Sample ratio mismatch (issue 42, point 5): the statistic, the guard it holds, and the
/// cohorts view that shows it.
@Suite struct SampleRatioTests {
    static func installs(matched: Int, unmatched: Int, sessions: (matched: Int, unmatched: Int) = (1, 1)) -> [(matched: Bool, sessions: Int)] {
        Array(repeating: (true, sessions.matched), count: matched) + Array(repeating: (false, sessions.unmatched), count: unmatched)
    }

    @Test func theChiSquarePValueIsTheTablesOne() {
        // Chi-square with 1 degree of freedom: 3.841 at 0.05, 6.635 at 0.01, 10.828 at 0.001.
        #expect(abs(SampleRatio.chiSquarePValue(3.841459) - 0.05) < 1e-6)
        #expect(abs(SampleRatio.chiSquarePValue(6.634897) - 0.01) < 1e-6)
        #expect(abs(SampleRatio.chiSquarePValue(10.827566) - 0.001) < 1e-7)
        #expect(SampleRatio.chiSquarePValue(0) == 1)
    }

    @Test func sixtyFortyAgainstFiftyIsAMismatchAndFiftyFiftyIsNot() {
        let off = SampleRatio(percent: 50, eligible: Self.installs(matched: 600, unmatched: 400))
        #expect(off.mismatch)
        #expect(abs((off.installs.statistic ?? 0) - 40) < 1e-9)        // 100² / 500 + 100² / 500
        #expect((off.installs.p ?? 1) < 1e-9)
        #expect(off.reason?.contains("60.0 % of installs matched (600 of 1000) where the rule picks 50.0 %") == true, "\(off.reason ?? "")")
        let fair = SampleRatio(percent: 50, eligible: Self.installs(matched: 500, unmatched: 500))
        #expect(!fair.mismatch && fair.installs.p == 1 && fair.sessions.p == 1 && fair.reason == nil)
        // 52/48 of 1,000 is within chance (p ≈ 0.21).
        #expect(!SampleRatio(percent: 50, eligible: Self.installs(matched: 520, unmatched: 480)).mismatch)
        // 5 % of 10,000: 560 is p ≈ 0.004, not yet; 600 is p ≈ 4e-6.
        #expect(!SampleRatio(percent: 5, eligible: Self.installs(matched: 560, unmatched: 9_440)).mismatch)
        #expect(SampleRatio(percent: 5, eligible: Self.installs(matched: 600, unmatched: 9_400)).mismatch)
    }

    /// A fair split of installs whose matched half starts three sessions each (a switch that
    /// makes the app restart): the installs are fine, the sessions are not.
    @Test func sessionsAreTestedAsClustersOfTheirInstalls() {
        let restarts = SampleRatio(percent: 50, eligible: Self.installs(matched: 500, unmatched: 500, sessions: (3, 1)))
        #expect(restarts.installs.p == 1)
        // (1500 − 0.5 · 2000)² / (0.25 · (500 · 9 + 500 · 1)) = 200.
        #expect(abs((restarts.sessions.statistic ?? 0) - 200) < 1e-9)
        #expect(restarts.mismatch && restarts.reason?.contains("75.0 % of sessions matched") == true, "\(restarts.reason ?? "")")
        // One session per install: the sessions' statistic is the installs'.
        let single = SampleRatio(percent: 30, eligible: Self.installs(matched: 350, unmatched: 650))
        #expect(abs((single.sessions.statistic ?? -1) - (single.installs.statistic ?? -2)) < 1e-9)
    }

    @Test func nothingIsTestedWithoutASplitOrWithTooFewInstalls() {
        for percent in [0.0, 100.0] {
            let none = SampleRatio(percent: percent, eligible: Self.installs(matched: 10, unmatched: 990))
            #expect(!none.mismatch && none.installs.p == nil && none.reason?.contains("no split") == true)
        }
        let few = SampleRatio(percent: 5, eligible: Self.installs(matched: 9, unmatched: 0))
        #expect(!few.mismatch && few.installs.p == nil && few.reason?.contains("too few installs") == true)
    }

    /// The guard: a mismatch holds the step; it never rolls back on it, and a regression
    /// still rolls back with one.
    @Test func aMismatchHoldsTheGuardButNeverRollsBackAlone() {
        let rollout = RolloutMachineTests.rollout(step: 1)
        let split = SampleRatio(percent: 25, eligible: Self.installs(matched: 400, unmatched: 600))
        #expect(split.mismatch)
        func with(_ evidence: [RolloutEvidence]) -> [RolloutEvidence] { evidence.map { var e = $0; e.sampleRatio = split; return e } }
        let held = RolloutMachine.decide(rollout, evidence: with(RolloutMachineTests.evidence()), now: 7 * RolloutMachineTests.hour)
        #expect(held.name == "wait" && held.reason.contains("sample ratio mismatch") && held.reason.contains("`14.2.0 (1)`"), "\(held)")
        let fair = SampleRatio(percent: 25, eligible: Self.installs(matched: 250, unmatched: 750))
        let advanced = RolloutMachine.decide(rollout, evidence: RolloutMachineTests.evidence().map { var e = $0; e.sampleRatio = fair; return e },
                                             now: 7 * RolloutMachineTests.hour)
        #expect(advanced.name == "advance", "\(advanced)")
        let regressed = RolloutMachine.decide(rollout, evidence: with(RolloutMachineTests.evidence(overall: "regressed")), now: 7 * RolloutMachineTests.hour)
        #expect(regressed.name == "roll_back", "\(regressed)")
    }

    /// Through the API: installs posted 60/40 against a 50 % rule (ids picked by the rule's own
    /// hash, as a forger holding the ingest key could) are flagged; a random 50/50 is not.
    @Test func theCohortsViewFlagsAForgedSplit() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let config = Array(#"{"rules": [{"id": "half", "match": {"percent": 50, "channels": ["beta"]}, "set": {"auto_fix": true}}]}"#.utf8)
        let admin = try app.addToken(role: "admin", name: "admin")
        #expect(try app.client.request("PUT", "/v1/admin/apps/com.example.mail/config", token: admin, body: config).status == 200)
        func post(version: String, installs: [String], channel: String = "beta") throws {
            let sessions = installs.map { install -> [String: Any] in
                var session = Fixtures.session(version: version, build: "1")
                session["install_id"] = install
                session["release"] = ["version": version, "build": "1", "channel": channel]
                return session
            }
            for start in stride(from: 0, to: sessions.count, by: 500) {
                #expect(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": Array(sessions[start..<min(start + 500, sessions.count)])]).status == 202)
            }
        }
        // 600 installs the rule matches and 400 it does not, picked by the rule's hash.
        var picked: [String] = [], matched = 0, unmatched = 0, index = 0
        while matched < 600 || unmatched < 400 {
            let install = "forged-\(index)"
            index += 1
            let inCohort = ConfigRule.bucket(ruleID: "half", installID: install) < 5_000
            if inCohort, matched < 600 { matched += 1; picked.append(install) }
            if !inCohort, unmatched < 400 { unmatched += 1; picked.append(install) }
        }
        try post(version: "14.2.0", installs: picked)
        // Installs of another channel are outside the rule's split: they must not dilute it.
        try post(version: "14.2.0", installs: (0..<300).map { "store-\($0)" }, channel: "appstore")
        let forged = try app.client.request("GET", "/v1/apps/com.example.mail/cohorts?release=14.2.0%20(1)&rule=half", token: viewer)
        let split = try #require((forged.json["cohort"] as? [String: Any])?["sample_ratio"] as? [String: Any], "\(forged.text)")
        #expect(split["mismatch"] as? Bool == true, "\(split)")
        #expect((split["installs"] as? [String: Any])?["eligible"] as? Int == 1000)
        #expect((split["installs"] as? [String: Any])?["matched"] as? Int == 600)

        // A guarded rollout of the rule at 50 %: its guard's look names the mismatch in its
        // evidence, and does not advance.
        let started = try app.client.postJSON("/v1/admin/apps/com.example.mail/rollouts", token: admin,
                                              json: ["rule": "half", "steps": [50, 100], "minimum_sessions": 100, "minimum_hours": 1] as [String: Any])
        #expect(started.status == 201, "\(started.text)")
        try post(version: "14.2.0", installs: picked)
        app.clock.advance(seconds: 2 * 3600)
        try app.application.evaluateRollouts()
        let rollout = try app.client.request("GET", "/v1/admin/apps/com.example.mail/rollouts/half", token: admin).json
        let look = try #require(rollout["last_look"] as? [String: Any], "\(rollout)")
        #expect(look["decision"] as? String != "advance" && rollout["percent"] as? Double == 50, "\(look)")
        let evidence = try #require((look["evidence"] as? [[String: Any]])?.first { $0["release"] as? String == "14.2.0 (1)" }, "\(look)")
        #expect((evidence["sample_ratio"] as? [String: Any])?["mismatch"] as? Bool == true, "\(evidence)")

        // Random install ids: the hash splits them about evenly (seeded, so the same each run).
        var generator = SplitMix64(seed: 7)
        try post(version: "14.3.0", installs: (0..<1000).map { _ in "I-\(generator.next())" })
        let fair = try app.client.request("GET", "/v1/apps/com.example.mail/cohorts?release=14.3.0%20(1)&rule=half", token: viewer)
        let fairSplit = try #require((fair.json["cohort"] as? [String: Any])?["sample_ratio"] as? [String: Any], "\(fair.text)")
        #expect(fairSplit["mismatch"] as? Bool == false, "\(fairSplit)")
        #expect(((fairSplit["installs"] as? [String: Any])?["p"] as? Double ?? 0) > 0.001)
    }
}
