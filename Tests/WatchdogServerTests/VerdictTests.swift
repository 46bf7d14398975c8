import Foundation
import GRDB
import Testing
import WatchdogTesting

/// Verdicts a release manager can trust: a flood from one session cannot flip them, any release
/// string ingest accepts can be named, and a config rule's cohorts can be compared.
@Suite struct VerdictTests {
    static let app = "/v1/apps/com.example.mail"

    /// Sessions of a release, one install each (`I-<release>-<n>`); returns their ids.
    static func sessions(_ app: TestApplication, key: String, version: String, build: String, count: Int, startedAt: String = FixtureDay.reports.at(9)) throws -> [String] {
        var ids: [String] = []
        for start in stride(from: 0, to: count, by: 500) {
            let batch = (start..<min(count, start + 500)).map { index -> [String: Any] in
                var session = Fixtures.session(version: version, build: build)
                session["install_id"] = "I-\(version)-\(index)"
                session["started_at"] = startedAt
                return session
            }
            ids += batch.compactMap { $0["id"] as? String }
            #expect(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": batch]).status == 202)
        }
        return ids
    }

    static func post(_ app: TestApplication, key: String, _ reports: [[String: Any]]) throws {
        for start in stride(from: 0, to: reports.count, by: 500) {
            let response = try app.client.postJSON("/v1/reports", token: key, json: ["reports": Array(reports[start..<min(start + 500, reports.count)])])
            #expect(response.status == 202 && response.json["accepted"] as? Int == min(500, reports.count - start), "\(response.text)")
        }
    }

    /// `count` view-frame reports spread over the first `sessions` session ids (the first
    /// `count - sessions` sessions get two), each report with its session's install.
    static func reports(_ count: Int, in sessions: Int, of ids: [String], version: String, build: String) throws -> [[String: Any]] {
        try (0..<count).map { index in
            let session = index < sessions ? index : index - sessions
            var report = try Fixtures.freshReport(version: version, build: build, kind: "view_frame_mismatch", sessionID: ids[session])
            report["install_id"] = "I-\(version)-\(session)"
            return report
        }
    }

    /// The demo's numbers: base 418 reports in 313 of 1,200 sessions; target 138 in 132 of 1,500.
    static func demoLikeReleases(_ app: TestApplication, key: String) throws -> [String] {
        let base = try sessions(app, key: key, version: "14.1.0", build: "31102", count: 1200)
        let target = try sessions(app, key: key, version: "14.2.0", build: "31245", count: 1500)
        try post(app, key: key, try reports(418, in: 313, of: base, version: "14.1.0", build: "31102")
            + reports(138, in: 132, of: target, version: "14.2.0", build: "31245"))
        return target
    }

    /// One install's sessions of a release, a view-frame glitch in every `glitchEvery`-th one.
    static func oneDevice(_ app: TestApplication, key: String, version: String, build: String, sessions count: Int, glitchEvery: Int) throws {
        var sessions: [[String: Any]] = [], reports: [[String: Any]] = []
        for index in 0..<count {
            var session = Fixtures.session(version: version, build: build)
            session["install_id"] = "I-one-device"
            sessions.append(session)
            if index % glitchEvery == 0 {
                var report = try Fixtures.freshReport(version: version, build: build, kind: "view_frame_mismatch", sessionID: session["id"] as? String)
                report["install_id"] = "I-one-device"
                reports.append(report)
            }
        }
        for start in stride(from: 0, to: count, by: 300) {
            #expect(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": Array(sessions[start..<min(count, start + 300)])]).status == 202)
        }
        try post(app, key: key, reports)
    }

    static func compare(_ app: TestApplication, _ viewer: String) throws -> [String: Any] {
        let response = try app.client.request("GET", "\(Self.app)/compare?base=14.1.0&target=14.2.0", token: viewer)
        #expect(response.status == 200, "\(response.text)")
        return response.json
    }

    @Test(arguments: [true, false])
    func sevenHundredReportsFromOneSessionDoNotFlipTheVerdict(floodCapOn: Bool) throws {
        let app = try TestApplication { if !floodCapOn { $0.floodCap = 0 } }
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let target = try Self.demoLikeReleases(app, key: key)

        let plain = try #require(try Self.compare(app, viewer)["overall"] as? [String: Any])
        let expected = Statistics.unclustered(target: 132, of: 1500, base: 313, of: 1200)
        #expect(plain["verdict"] as? String == "improved")
        #expect(Statistics.rounded(plain["ratio"]) == Statistics.rounded(expected.ratio))
        #expect(Statistics.rounded((plain["interval"] as? [String: Any])?["lower"]) == Statistics.rounded(expected.lower))
        #expect(Statistics.rounded((plain["interval"] as? [String: Any])?["upper"]) == Statistics.rounded(expected.upper))

        // A tester whose view flips every second: 700 reports of one issue, one session, one install.
        let floodSession = target[1499]
        let flood = try (0..<700).map { _ -> [String: Any] in
            var report = try Fixtures.freshReport(version: "14.2.0", build: "31245", kind: "view_frame_mismatch", sessionID: floodSession)
            report["install_id"] = "I-14.2.0-1499"
            return report
        }
        try Self.post(app, key: key, flood)
        let json = try Self.compare(app, viewer)
        let overall = try #require(json["overall"] as? [String: Any])
        let flooded = Statistics.unclustered(target: 133, of: 1500, base: 313, of: 1200)
        #expect(overall["verdict"] as? String == "improved", "one session must not flip the verdict")
        #expect(Statistics.rounded(overall["ratio"]) == Statistics.rounded(flooded.ratio))
        #expect(Statistics.rounded((overall["interval"] as? [String: Any])?["lower"]) == Statistics.rounded(flooded.lower))
        #expect(Statistics.rounded((overall["interval"] as? [String: Any])?["upper"]) == Statistics.rounded(flooded.upper))
        let targetSide = try #require(overall["target"] as? [String: Any])
        #expect(targetSide["affected_sessions"] as? Int == 133)
        // The flood is visible as a flood: counted apart with the cap, and concentrated either way.
        let share = ((json["target"] as? [String: Any])?["concentration"] as? [String: Any])?["top_installs_report_share"] as? Double ?? 0
        #expect(share > 0.8, "the top 1 % of installs sent most of the reports: \(share)")
        if floodCapOn {
            #expect(targetSide["flooded_reports"] as? Int == 690)
            #expect(targetSide["reports"] as? Int == 148)
            #expect(Statistics.rounded(overall["report_rate_ratio"]) == Statistics.rounded((148.0 / 1500) / (418.0 / 1200)))
            let release = try #require((try app.client.request("GET", "\(Self.app)/releases", token: viewer).json["releases"] as? [[String: Any]])?.first)
            #expect(release["flooded_reports"] as? Int == 690 && release["reports"] as? Int == 148)
            let page = try app.client.request("GET", "\(Self.app)/reports?release=14.2.0&limit=500", token: viewer)
            #expect((page.json["reports"] as? [[String: Any]] ?? []).filter { $0["flooded"] as? Bool == true }.count == 500, "the newest 500 are past the cap")
        } else {
            // Without the cap the report rate rises 1.6×, the Poisson verdict of old said `regressed`.
            #expect(targetSide["flooded_reports"] as? Int == 0)
            #expect(Statistics.rounded(overall["report_rate_ratio"]) == Statistics.rounded((838.0 / 1500) / (418.0 / 1200)))
        }
    }

    @Test func oneInstallWithSixHundredGlitchingSessionsWidensTheIntervalInsteadOfFlippingTheVerdict() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        _ = try Self.demoLikeReleases(app, key: key)
        // One tester's device: 600 sessions of 14.2.0, a glitch in every one.
        try Self.oneDevice(app, key: key, version: "14.2.0", build: "31245", sessions: 600, glitchEvery: 1)
        let overall = try #require(try Self.compare(app, viewer)["overall"] as? [String: Any])
        // Plain Wilson intervals would say `regressed` (732/2,100 against 313/1,200: 1.20–1.50).
        let plain = Statistics.comparison(target: 732, of: 2100, base: 313, of: 1200)
        #expect(plain.lower > 1)
        let targetDesignEffect = Statistics.designEffect([(600, 600)] + Statistics.singletons(132, of: 1500))
        let expected = Statistics.comparison(target: 732, of: 2100, base: 313, of: 1200, targetDesignEffect: targetDesignEffect,
                                             baseDesignEffect: Statistics.designEffect(Statistics.singletons(313, of: 1200)))
        #expect(targetDesignEffect > 100)
        #expect(Statistics.rounded((overall["target"] as? [String: Any])?["design_effect"]) == Statistics.rounded(targetDesignEffect))
        #expect(Statistics.rounded((overall["interval"] as? [String: Any])?["lower"]) == Statistics.rounded(expected.lower))
        #expect(Statistics.rounded((overall["interval"] as? [String: Any])?["upper"]) == Statistics.rounded(expected.upper))
        #expect(overall["verdict"] as? String == "no_change", "one install cannot make the verdict")
        let json = try Self.compare(app, viewer)
        for dimension in ["by_kind", "by_screen", "by_keyboard_mode", "by_idiom"] {
            let verdicts = (json[dimension] as? [[String: Any]] ?? []).compactMap { $0["verdict"] as? String }
            #expect(!verdicts.isEmpty && !verdicts.contains("regressed"), "\(dimension): \(verdicts)")
        }
    }

    @Test func aReleaseRunByOneDeviceHasTheCertaintyOfOneDevice() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        _ = try Self.demoLikeReleases(app, key: key)
        // 14.3.0 so far runs on one tester's device: 600 sessions, a glitch in half of them.
        try Self.oneDevice(app, key: key, version: "14.3.0", build: "1", sessions: 600, glitchEvery: 2)
        let response = try app.client.request("GET", "\(Self.app)/compare?base=14.1.0&target=14.3.0", token: viewer)
        let overall = try #require(response.json["overall"] as? [String: Any])
        #expect(Statistics.comparison(target: 300, of: 600, base: 313, of: 1200).lower > 1, "as if independent: regressed")
        #expect((overall["target"] as? [String: Any])?["design_effect"] as? Double == 600, "one cluster: one observation")
        #expect(overall["verdict"] as? String == "no_change")
    }

    @Test func aReleaseSpeltComposedOrDecomposedIsOneRelease() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let composed = "\u{FC}n\u{EF}", decomposed = "u\u{308}ni\u{308}"
        #expect(Array(composed.utf8) != Array(decomposed.utf8))
        _ = try Self.sessions(app, key: key, version: "9.0", build: composed, count: 2)
        let ids = try Self.sessions(app, key: key, version: "9.0", build: decomposed, count: 3)
        try Self.post(app, key: key, try Self.reports(2, in: 2, of: ids, version: "9.0", build: decomposed))
        let releases = try #require(try app.client.request("GET", "\(Self.app)/releases", token: viewer).json["releases"] as? [[String: Any]])
        #expect(releases.count == 1)
        #expect(releases.first?["sessions"] as? Int == 5 && releases.first?["reports"] as? Int == 2)
        #expect(Array(((releases.first?["build"] as? String) ?? "").utf8) == Array(composed.utf8), "stored in NFC")
    }

    @Test func anyReleaseStringIngestAcceptsIsReachableThroughEveryPerReleaseEndpoint() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let builds = ["9900\">x", "1 (2)", "a/b", "50%", "ünï", "x) (y"]
        for (index, build) in builds.enumerated() {
            let version = "20.\(index).0"
            let ids = try Self.sessions(app, key: key, version: version, build: build, count: 4)
            try Self.post(app, key: key, try Self.reports(2, in: 2, of: ids, version: version, build: build))
        }
        // A release whose display text equals another's: "1 (2) (3)" from version "1 (2)" build "3"
        // and from version "1" build "2) (3".
        for (version, build) in [("1 (2)", "3"), ("1", "2) (3")] {
            let ids = try Self.sessions(app, key: key, version: version, build: build, count: 1)
            try Self.post(app, key: key, try Self.reports(1, in: 1, of: ids, version: version, build: build))
        }
        let releases = try #require(try app.client.request("GET", "\(Self.app)/releases", token: viewer).json["releases"] as? [[String: Any]])
        #expect(releases.count == builds.count + 2)
        func encoded(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text }
        let odd = releases.filter { $0["version"] as? String != "1" && $0["version"] as? String != "1 (2)" }
        for row in odd {
            let text = try #require(row["release"] as? String)
            let id = try #require(row["id"] as? String)
            let other = try #require(odd.first { $0["id"] as? String != id })
            for name in [text, id] {
                let q = encoded(name)
                for path in ["issues?release=\(q)", "timeseries?release=\(q)&bucket=day", "keyboard?release=\(q)", "reports?release=\(q)",
                             "reports.ndjson?release=\(q)", "compare?base=\(q)&target=\(encoded(other["id"] as? String ?? ""))",
                             "overlay?base=\(q)&target=\(encoded(other["id"] as? String ?? ""))&bucket=day"] {
                    let response = try app.client.request("GET", "\(Self.app)/\(path)", token: viewer)
                    #expect(response.status == 200, "\(path): \(response.status) \(response.text.prefix(200))")
                }
                let issues = try app.client.request("GET", "\(Self.app)/issues?release=\(q)", token: viewer)
                #expect(issues.json["release"] as? String == text)
                let reports = try app.client.request("GET", "\(Self.app)/reports?release=\(q)", token: viewer).json["reports"] as? [[String: Any]] ?? []
                #expect(reports.count == 2 && reports.allSatisfy { $0["release"] as? String == text }, "\(text): \(reports.count)")
            }
        }
        // Two releases shown alike: the text is ambiguous (400, naming the ids); each id works.
        let twins = releases.filter { $0["release"] as? String == "1 (2) (3)" }
        #expect(twins.count == 2)
        #expect(try app.client.request("GET", "\(Self.app)/issues?release=\(encoded("1 (2) (3)"))", token: viewer).errorCode == "ambiguous_release")
        for twin in twins {
            let issues = try app.client.request("GET", "\(Self.app)/issues?release=\(twin["id"] as? String ?? "")", token: viewer)
            #expect(issues.status == 200 && (issues.json["issues"] as? [[String: Any]])?.count == 1)
        }
    }

    @Test func aFiftyPercentRuleSplitsAReleaseIntoCohortsWithTheirOwnVerdict() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let admin = try app.addToken(role: "admin")
        let patch = try app.client.request("PATCH", "/v1/admin/apps/com.example.mail/config", token: admin,
                                              body: Array(#"{"rules": [{"id": "fix-half", "name": "auto_fix for half", "match": {"percent": 50}, "set": {"auto_fix": true}}]}"#.utf8))
        #expect(patch.status == 200, "\(patch.text)")
        let ids = try Self.sessions(app, key: key, version: "14.2.0", build: "31245", count: 2000)
        // Which installs the rule switched, as each install would read its config.
        var matched: [Int] = [], unmatched: [Int] = []
        for index in 0..<2000 {
            let config = try app.client.request("GET", "/v1/config?app=com.example.mail&version=14.2.0&build=31245&channel=beta&install_id=I-14.2.0-\(index)", token: key)
            if config.json["auto_fix"] as? Bool == true { matched.append(index) } else { unmatched.append(index) }
        }
        #expect(abs(matched.count - 1000) < 100, "about half: \(matched.count)")
        // Installs with auto_fix glitch in every 10th session, the others in every 5th.
        let glitching = matched.enumerated().filter { $0.offset % 10 == 0 }.map(\.element) + unmatched.enumerated().filter { $0.offset % 5 == 0 }.map(\.element)
        let reports = try glitching.map { index -> [String: Any] in
            var report = try Fixtures.freshReport(version: "14.2.0", build: "31245", kind: "view_frame_mismatch", sessionID: ids[index])
            report["install_id"] = "I-14.2.0-\(index)"
            return report
        }
        try Self.post(app, key: key, reports)
        let response = try app.client.request("GET", "\(Self.app)/cohorts?release=14.2.0&rule=fix-half", token: viewer)
        #expect(response.status == 200, "\(response.text)")
        let cohort = try #require(response.json["cohort"] as? [String: Any])
        #expect(cohort["installs_matched"] as? Int == matched.count && cohort["installs_not_matched"] as? Int == unmatched.count)
        let overall = try #require(response.json["overall"] as? [String: Any])
        let matchedAffected = Double((matched.count + 9) / 10), unmatchedAffected = Double((unmatched.count + 4) / 5)
        let expected = Statistics.unclustered(target: Int(matchedAffected), of: matched.count, base: Int(unmatchedAffected), of: unmatched.count)
        #expect(Statistics.rounded(overall["ratio"]) == Statistics.rounded(expected.ratio))
        #expect(abs((overall["ratio"] as? Double ?? 0) - 0.5) < 0.02, "half as often")
        #expect(Statistics.rounded((overall["interval"] as? [String: Any])?["lower"]) == Statistics.rounded(expected.lower))
        #expect(Statistics.rounded((overall["interval"] as? [String: Any])?["upper"]) == Statistics.rounded(expected.upper))
        #expect(overall["verdict"] as? String == "improved")
        #expect((response.json["by_kind"] as? [[String: Any]])?.first?["verdict"] as? String == "improved")
        #expect(try app.client.request("GET", "\(Self.app)/cohorts?release=14.2.0&rule=nope", token: viewer).status == 404)
        let rules = try app.client.request("GET", "\(Self.app)/rules", token: viewer)
        #expect((rules.json["rules"] as? [[String: Any]])?.first?["id"] as? String == "fix-half")
    }

    /// Base (14.1.0 (1)): first sessions ten days before the fixture reports' day, target (14.2.0
    /// (2)) on that day; each has 10 sessions at noon of its day 0 and of its day 1. Their ids.
    static func twoReleasesTenDaysApart(_ app: TestApplication, key: String) throws -> (baseDay: FixtureDay, targetDay: FixtureDay, base: [String], target: [String]) {
        let targetDay = FixtureDay.reports, baseDay = targetDay.adding(days: -10)
        var base: [String] = [], target: [String] = []
        for day in 0..<2 {
            base += try Self.sessions(app, key: key, version: "14.1.0", build: "1", count: 10, startedAt: baseDay.adding(days: day).at(12))
            target += try Self.sessions(app, key: key, version: "14.2.0", build: "2", count: 10, startedAt: targetDay.adding(days: day).at(12))
        }
        return (baseDay, targetDay, base, target)
    }

    @Test func timeseriesGivesRatesPerSessionMarksThePartialBucketAndOverlaysTwoReleasesByAge() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let (baseDay, targetDay, base, target) = try Self.twoReleasesTenDaysApart(app, key: key)
        func report(_ version: String, _ build: String, _ session: String, at time: String) throws -> [String: Any] {
            var report = try Fixtures.freshReport(version: version, build: build, kind: "view_frame_mismatch", sessionID: session)
            report["occurred_at"] = time
            return report
        }
        try Self.post(app, key: key, [
            try report("14.1.0", "1", base[0], at: baseDay.at(12, 30)), try report("14.1.0", "1", base[1], at: baseDay.at(12, 31)),
            try report("14.1.0", "1", base[10], at: baseDay.adding(days: 1).at(12, 30)),
            try report("14.2.0", "2", target[10], at: targetDay.adding(days: 1).at(12, 30)),
        ])
        let single = try app.client.request("GET", "\(Self.app)/timeseries?release=14.1.0&bucket=day&from=\(baseDay.date)&to=\(baseDay.adding(days: 2).date)", token: viewer)
        #expect(single.json["sessions"] as? [Int] == [10, 10, 0])
        #expect((single.json["rates"] as? [String: [Any]])?["view_frame_mismatch"].map { $0.map { $0 as? Double } } == [200, 100, nil])
        #expect(single.json["partial_buckets"] as? [Int] == [])
        let now = ISO8601DateFormatter().string(from: Date())
        let today = try app.client.request("GET", "\(Self.app)/timeseries?bucket=day&from=\(targetDay.date)&to=\(now)", token: viewer)
        let todayBuckets = (today.json["buckets"] as? [String] ?? []).count
        #expect(today.json["partial_buckets"] as? [Int] == [todayBuckets - 1], "the bucket holding now is partial")

        let overlay = try app.client.request("GET", "\(Self.app)/overlay?base=14.1.0&target=14.2.0&bucket=day", token: viewer)
        #expect(overlay.status == 200, "\(overlay.text)")
        let lines = try #require(overlay.json["releases"] as? [[String: Any]])
        #expect(lines.map { $0["role"] as? String } == ["base", "target"])
        #expect(lines[0]["first_session"] as? String == baseDay.written() && lines[1]["first_session"] as? String == targetDay.written())
        #expect((lines[0]["rates"] as? [Any])?.prefix(2).map { $0 as? Double } == [200, 100])
        #expect((lines[1]["rates"] as? [Any])?.prefix(2).map { $0 as? Double } == [0, 100], "day 1 of each release lines up")
        #expect((lines[0]["sessions"] as? [Any])?.prefix(2).map { $0 as? Int } == [10, 10])
    }
}

/// A data dir from before the affected-session roll-ups gets them from its raw rows.
@Suite(.enabled(if: TestStore.isSQLite, "migrates SQLite data dirs")) struct VerdictMigrationTests {
    /// Takes the data dir back to the schema before the migration.
    static func downgrade(_ app: TestApplication, pruning: String? = nil) throws {
        try app.stop()
        let queue = try DatabaseQueue(path: try app.sqlite.path)
        try queue.write { db in
            try OldSchema.undoHourlyAffected(db)
            try OldSchema.undoCompactStorage(db)
            for table in ["affected_session_values", "release_affected", "release_installs", "release_install_kinds", "release_hourly_sessions"] {
                try db.execute(sql: "DROP TABLE \(table)")
            }
            for (table, column) in [("releases", "partial_history"), ("reports", "flooded"), ("release_kinds", "flooded_reports"), ("release_breakdown", "flooded_reports"),
                                    ("release_hourly", "flooded_reports"), ("issue_releases", "flooded_reports"), ("issue_sessions", "reports")] {
                try db.execute(sql: "ALTER TABLE \(table) DROP COLUMN \(column)")
            }
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = '2026-11-23-robust-verdicts'")
            if let pruning { try db.execute(sql: pruning) }
        }
        try queue.close()
    }

    @Test func aReleaseWhoseRawRowsRetentionPrunedIsNotComparedByKindAfterTheMigration() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        _ = try VerdictTests.demoLikeReleases(app, key: key)
        try app.stop()
        // As retention would have: half of the base release's raw rows gone, its roll-ups whole.
        try Self.downgrade(app, pruning: "DELETE FROM reports WHERE version = '14.1.0' AND rowid % 2 = 0; DELETE FROM sessions WHERE version = '14.1.0' AND rowid % 2 = 0")
        try app.restart()
        let json = try VerdictTests.compare(app, viewer)
        let overall = try #require(json["overall"] as? [String: Any])
        #expect(overall["verdict"] as? String == "improved", "the release roll-ups were never pruned")
        for row in json["by_kind"] as? [[String: Any]] ?? [] {
            #expect(row["verdict"] is NSNull && (row["reason"] as? String)?.contains("retention") == true, "\(row["value"] ?? "")")
        }
        #expect(((json["by_screen"] as? [[String: Any]]) ?? []).allSatisfy { $0["verdict"] is NSNull })
    }

    @Test func anExistingDataDirGetsTheSameFiguresAfterTheMigrationAsFreshIngestGives() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let admin = try app.addToken(role: "admin")
        _ = try app.client.request("PATCH", "/v1/admin/apps/com.example.mail/config", token: admin,
                                      body: Array(#"{"rules": [{"id": "half", "match": {"percent": 50}, "set": {"auto_fix": true}}]}"#.utf8))
        _ = try VerdictTests.demoLikeReleases(app, key: key)
        let paths = ["/compare?base=14.1.0&target=14.2.0", "/cohorts?release=14.2.0&rule=half", "/releases",
                     "/timeseries?release=14.2.0&bucket=day&from=\(FixtureDay.reports.adding(days: -1).date)&to=\(FixtureDay.reports.adding(days: 1).date)", "/issues?release=14.2.0"]
        // Sessions affected per hour are not in the raw rows (a report's session is inside its
        // compressed body): the hourly-affected migration backfills nothing, and says so
        // (OverTimeShareMigrationTests); every other figure is the same.
        func answers() throws -> [String] {
            try paths.map { path in
                let text = try app.client.request("GET", "\(VerdictTests.app)\(path)", token: viewer).text
                guard path.hasPrefix("/timeseries"), var json = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return text }
                #expect(json.removeValue(forKey: "affected_sessions") != nil && json.removeValue(forKey: "shares") != nil)
                return String(decoding: try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]), as: UTF8.self)
            }
        }
        let fresh = try answers()
        #expect(fresh.allSatisfy { !$0.contains("\"error\"") })
        try app.stop()
        // Back to the schema before the migration: its tables and columns gone, its record too.
        try Self.downgrade(app)
        try app.restart()
        #expect(try answers() == fresh)
    }
}
