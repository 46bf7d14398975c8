import Foundation
import Testing
import Locking
import WatchdogTesting

/// Release health against a known dataset posted through the API.
@Suite struct HealthTests {
    /// Base 14.1.0: 1,000 sessions; 400 view-frame glitches on Compose, 30 covered inputs on
    /// Search, 50 keyboards without input. Target 14.2.0: 1,000 sessions; 100 view-frame
    /// glitches, 90 covered inputs (tripled), none without input, 20 x-new_glitch on Settings.
    /// Every report comes from a session of its own, so each kind's reports equal its affected sessions.
    static func dataset(_ app: TestApplication, key: String) throws {
        func post(_ reports: [[String: Any]]) throws {
            for start in stride(from: 0, to: reports.count, by: 500) {
                let response = try app.client.postJSON("/v1/reports", token: key, json: ["reports": Array(reports[start..<min(start + 500, reports.count)])])
                #expect(response.status == 202 && response.json["accepted"] as? Int == min(500, reports.count - start))
            }
        }
        var sessionIDs: [String: [String]] = [:]
        for (version, build) in [("14.1.0", "31102"), ("14.2.0", "31245")] {
            let sessions = (0..<1000).map { index in
                var session = Fixtures.session(version: version, build: build)
                session["install_id"] = "I-\(version)-\(index)"
                return session
            }
            sessionIDs[version] = sessions.compactMap { $0["id"] as? String }
            for start in stride(from: 0, to: 1000, by: 500) {
                #expect(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": Array(sessions[start..<start + 500])]).status == 202)
            }
        }
        var next: [String: Int] = [:]
        func reports(_ count: Int, version: String, build: String, kind: String, screen: String) throws -> [[String: Any]] {
            try (0..<count).map { _ in
                let index = next[version, default: 0]
                next[version] = index + 1
                var report = try Fixtures.freshReport(version: version, build: build, kind: kind, sessionID: sessionIDs[version]?[index])
                report["install_id"] = "I-\(version)-\(index)"
                report["screen"] = screen
                if kind == "interaction_lock" { report["lock"] = ["duration_s": 12.0] }
                return report
            }
        }
        try post(try reports(400, version: "14.1.0", build: "31102", kind: "view_frame_mismatch", screen: "ComposeViewController")
            + reports(30, version: "14.1.0", build: "31102", kind: "input_covered_by_keyboard", screen: "SearchViewController")
            + reports(50, version: "14.1.0", build: "31102", kind: "keyboard_without_input", screen: "SearchViewController"))
        try post(try reports(100, version: "14.2.0", build: "31245", kind: "view_frame_mismatch", screen: "ComposeViewController")
            + reports(90, version: "14.2.0", build: "31245", kind: "input_covered_by_keyboard", screen: "SearchViewController")
            + reports(20, version: "14.2.0", build: "31245", kind: "x-new_glitch", screen: "SettingsViewController"))
    }

    static func rounded(_ value: Any?) -> Double? { Statistics.rounded(value) }

    @Test func compareGivesTheAffectedSessionRatioWithItsIntervalAndVerdict() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        try Self.dataset(app, key: key)
        let response = try app.client.request("GET", "/v1/apps/com.example.mail/compare?base=14.1.0&target=14.2.0%20(31245)", token: viewer)
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json["method"] as? String == "affected_sessions")
        let byKind = Dictionary(uniqueKeysWithValues: (response.json["by_kind"] as? [[String: Any]] ?? []).map { ($0["value"] as? String ?? "", $0) })
        func check(_ row: [String: Any], target: Int, base: Int, verdict: String, _ what: String) {
            // Every session has an install of its own: the design effect is only m / (m − 1).
            let expected = Statistics.unclustered(target: target, of: 1000, base: base, of: 1000)
            let interval = row["interval"] as? [String: Any]
            #expect(Self.rounded(row["ratio"]) == Statistics.rounded(expected.ratio), "\(what) ratio")
            #expect(Self.rounded(interval?["lower"]) == Statistics.rounded(expected.lower), "\(what) lower")
            #expect(Self.rounded(interval?["upper"]) == Statistics.rounded(expected.upper), "\(what) upper")
            #expect(row["verdict"] as? String == verdict, "\(what) verdict")
        }
        let frames = try #require(byKind["view_frame_mismatch"])
        check(frames, target: 100, base: 400, verdict: "improved", "view frames")
        #expect(Self.rounded(frames["ratio"]) == 0.25)
        #expect(Self.rounded((frames["interval"] as? [String: Any])?["lower"]) == 0.204, "a literal, worked by hand from the formula")
        #expect(Self.rounded((frames["base"] as? [String: Any])?["design_effect"]) == 1.001)
        #expect((frames["base"] as? [String: Any])?["affected_session_rate"] as? Double == 0.4)
        #expect((frames["base"] as? [String: Any])?["reports_per_1k_sessions"] as? Double == 400)
        #expect(Self.rounded(frames["report_rate_ratio"]) == 0.25)

        // 50 → 0: no continuity correction needed; the upper bound is finite and below 1.
        let vanished = try #require(byKind["keyboard_without_input"])
        #expect(vanished["ratio"] as? Double == 0)
        check(vanished, target: 0, base: 50, verdict: "improved", "vanished")

        // 0 → 20: no finite ratio or upper bound, but a lower bound above 1.
        let appeared = try #require(byKind["x-new_glitch"])
        #expect(appeared["ratio"] is NSNull)
        #expect((appeared["interval"] as? [String: Any])?["upper"] is NSNull)
        check(appeared, target: 20, base: 0, verdict: "regressed", "appeared")

        let tripled = try #require(byKind["input_covered_by_keyboard"])
        #expect(Self.rounded(tripled["ratio"]) == 3)
        check(tripled, target: 90, base: 30, verdict: "regressed", "tripled")

        let overall = try #require(response.json["overall"] as? [String: Any])
        check(overall, target: 210, base: 480, verdict: "improved", "overall")
        #expect((overall["base"] as? [String: Any])?["reports"] as? Int == 480)
        #expect((overall["target"] as? [String: Any])?["reports"] as? Int == 210)
        let screens = (response.json["by_screen"] as? [[String: Any]] ?? []).compactMap { $0["value"] as? String }
        #expect(Set(screens) == ["ComposeViewController", "SearchViewController", "SettingsViewController"])
        #expect((response.json["target"] as? [String: Any])?["glitch_free_session_rate"] as? Double == 0.79)
        #expect(try app.client.request("GET", "/v1/apps/com.example.mail/compare?base=14.2.0&target=14.2.0%20(31245)", token: viewer).errorCode == "same_release")
    }

    @Test func aReleaseWithoutSessionsHasNullRatesWithAReason() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        #expect(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": [Fixtures.session(version: "1.0", build: "1")]]).status == 202)
        #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": [try Fixtures.freshReport(version: "1.0", build: "1"), try Fixtures.freshReport(version: "2.0", build: "2")]]).status == 202)
        let response = try app.client.request("GET", "/v1/apps/com.example.mail/compare?base=1.0&target=2.0", token: viewer)
        let overall = try #require(response.json["overall"] as? [String: Any])
        #expect(overall["ratio"] is NSNull)
        #expect(overall["verdict"] is NSNull)
        #expect((overall["reason"] as? String)?.contains("target") == true)
        #expect((overall["target"] as? [String: Any])?["reports_per_1k_sessions"] is NSNull)
        #expect(try app.client.request("GET", "/v1/apps/com.example.mail/compare?base=9.9&target=2.0", token: viewer).status == 404)
        #expect(try app.client.request("GET", "/v1/apps/com.example.mail/compare?base=1.0", token: viewer).status == 400)
    }

    @Test func issuesFlagNewAndRegressedFingerprints() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        try Self.dataset(app, key: key)
        let response = try app.client.request("GET", "/v1/apps/com.example.mail/issues?release=14.2.0", token: viewer)
        let issues = Dictionary(uniqueKeysWithValues: (response.json["issues"] as? [[String: Any]] ?? []).map { ($0["kind"] as? String ?? "", $0) })
        #expect(issues.count == 3)
        let new = try #require(issues["x-new_glitch"])
        #expect(new["new"] as? Bool == true)
        #expect(new["first_release"] as? String == "14.2.0 (31245)")
        let tripled = try #require(issues["input_covered_by_keyboard"])
        #expect(tripled["regressed"] as? Bool == true)
        #expect(tripled["new"] as? Bool == false)
        #expect(tripled["first_release"] as? String == "14.1.0 (31102)")
        #expect(tripled["previous_release"] as? String == "14.1.0 (31102)")
        // The badge reads the always-valid interval, as Compare, alerts and the gate do (issue 44).
        #expect((tripled["trend"] as? [String: Any])?["interval_method"] as? String == "sequential")
        let fewer = try #require(issues["view_frame_mismatch"])
        #expect(fewer["regressed"] as? Bool == false)
        #expect(fewer["reports"] as? Int == 100)
        #expect(fewer["affected_sessions"] as? Int == 100)
        #expect(fewer["title"] as? String == "View frame mismatch · composeToolbar on ComposeViewController (docked)")
        let previous = try #require(tripled["previous"] as? [String: Any])
        #expect(previous["release"] as? String == "14.1.0 (31102)" && previous["affected_sessions"] as? Int == 30)
        #expect(previous["affected_session_rate"] as? Double == 0.03)
        #expect(new["regressed"] as? Bool == false, "new is never also regressed")

        // The fingerprint leads to its reports.
        let fingerprint = try #require(tripled["fingerprint"] as? String)
        let page = try app.client.request("GET", "/v1/apps/com.example.mail/reports?fingerprint=\(fingerprint)&limit=500", token: viewer)
        let reports = page.json["reports"] as? [[String: Any]] ?? []
        #expect(reports.count == 90 + 30)
        #expect(reports.allSatisfy { $0["fingerprint"] as? String == fingerprint })
    }

    @Test func paginationWalksEveryReportOnceWhileAnotherClientPosts() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        var original = Set<String>()
        for _ in 0..<20 {
            let reports = try (0..<500).map { _ in try Fixtures.freshReport() }
            original.formUnion(reports.compactMap { $0["id"] as? String })
            #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": reports]).status == 202)
        }
        let stop = Locked(false)
        let posted = Locked(0)
        let bodies = try (0..<200).map { _ in Array(try JSONSerialization.data(withJSONObject: ["reports": try (0..<5).map { _ in try Fixtures.freshReport() }])) }
        let client = app.client
        let poster = Thread {
            for body in bodies where !stop.withLock({ $0 }) {
                if (try? client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: body))?.status == 202 {
                    posted.withLock { $0 += 5 }
                }
            }
        }
        poster.start()
        var seen: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            let path = "/v1/apps/com.example.mail/reports?limit=100" + (cursor.map { "&cursor=\($0)" } ?? "")
            let page = try app.client.request("GET", path, token: viewer)
            #expect(page.status == 200)
            seen += (page.json["reports"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            cursor = page.json["next_cursor"] as? String
            pages += 1
        } while cursor != nil && pages < 1000
        stop.withLock { $0 = true }
        while poster.isExecuting { usleep(1000) }
        #expect(posted.withLock { $0 } > 0, "the other client did post meanwhile")
        #expect(seen.count == Set(seen).count, "no report twice")
        #expect(original.isSubset(of: Set(seen)), "no gap: \(original.subtracting(seen).count) missing")
        #expect(seen.count < original.count + posted.withLock { $0 } + 1)
        #expect(try app.client.request("GET", "/v1/apps/com.example.mail/reports?cursor=garbage", token: viewer).errorCode == "invalid_cursor")
    }

    @Test func exportStreamsEveryReportAsOneJSONLineAndOneReportReadsInFull() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        var reports = try (0..<1500).map { _ in try Fixtures.freshReport() }
        reports[0]["extra_client_field"] = "kept as sent"
        for start in stride(from: 0, to: reports.count, by: 500) {
            #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": Array(reports[start..<start + 500])]).status == 202)
        }
        let export = try app.client.request("GET", "/v1/apps/com.example.mail/reports.ndjson", token: viewer)
        #expect(export.status == 200)
        #expect(export.headers["content-disposition"]?.contains("attachment") == true)
        #expect(export.streamed, "sent as a stream (chunked on the wire), not built in memory")
        let body = export.body
        let lines = body.split(separator: UInt8(ascii: "\n"))
        #expect(lines.count == 1500)
        let ids = Set(lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0))) as? [String: Any] }.compactMap { $0["id"] as? String })
        #expect(ids == Set(reports.compactMap { $0["id"] as? String }))

        let id = try #require(reports[0]["id"] as? String)
        let one = try app.client.request("GET", "/v1/reports/\(id)", token: viewer)
        #expect(one.status == 200)
        #expect((one.json["report"] as? [String: Any])?["extra_client_field"] as? String == "kept as sent")
        #expect(one.json["received_at"] is String && (one.json["fingerprint"] as? String)?.hasPrefix("fp_") == true)
        #expect(try app.client.request("GET", "/v1/reports/\(UUID().uuidString)", token: viewer).status == 404)
        #expect(try app.client.request("GET", "/v1/reports/\(id)", token: key).status == 403)
    }

    @Test func timeseriesIsZeroFilledAndKeyboardHeightsFlagOutliers() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        func report(at time: String, model: String, inputMode: String, height: Double, windowHeight: Double = 844) throws -> [String: Any] {
            var report = try Fixtures.freshReport()
            report["occurred_at"] = time
            report["device"] = ["model": model, "idiom": "phone"]
            report["window"] = ["x": 0, "y": 0, "width": 390, "height": windowHeight]
            report["keyboard"] = ["visible": true, "mode": "docked", "height": height, "input_mode": inputMode]
            return report
        }
        let day = FixtureDay.reports
        let reports = [
            try report(at: day.at(10, 15), model: "iPhone15,2", inputMode: "en-US", height: 216),
            try report(at: day.at(10, 45), model: "iPhone15,2", inputMode: "en-US", height: 216),
            try report(at: day.at(13, 5), model: "iPhone15,2", inputMode: "ja-JP", height: 252),
            try report(at: day.at(13, 6), model: "iPad8,1", inputMode: "en-US", height: 1024, windowHeight: 1024),
        ]
        #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": reports]).status == 202)
        let series = try app.client.request("GET", "/v1/apps/com.example.mail/timeseries?kind=view_frame_mismatch&bucket=hour&from=\(day.at(9))&to=\(day.at(14))", token: viewer)
        #expect(series.json["buckets"] as? [String] == (9...14).map { day.written($0) })
        #expect((series.json["series"] as? [String: [Int]])?["view_frame_mismatch"] == [0, 2, 0, 0, 2, 0])
        let days = try app.client.request("GET", "/v1/apps/com.example.mail/timeseries?bucket=day&from=\(day.adding(days: -1).date)&to=\(day.adding(days: 1).date)", token: viewer)
        #expect((days.json["series"] as? [String: [Int]])?["view_frame_mismatch"] == [0, 4, 0])
        #expect(try app.client.request("GET", "/v1/apps/com.example.mail/timeseries?bucket=minute", token: viewer).status == 400)
        #expect(series.json["truncated"] as? Bool == false)

        // More than 5,000 hours (300 days, 7,200): the latest 5,000 buckets, ending at `to`, and it says so.
        let long = try app.client.request("GET", "/v1/apps/com.example.mail/timeseries?bucket=hour&from=\(day.adding(days: -300).at(0))&to=\(day.at(14))", token: viewer)
        let longBuckets = long.json["buckets"] as? [String] ?? []
        #expect(long.status == 200 && long.json["truncated"] as? Bool == true)
        #expect(longBuckets.count == 5_000 && longBuckets.last == day.written(14))
        #expect((long.json["series"] as? [String: [Int]])?["view_frame_mismatch"]?.reduce(0, +) == 4, "every report is inside the kept range")
        // `from` after `to`: an empty series, not an error.
        let backwards = try app.client.request("GET", "/v1/apps/com.example.mail/timeseries?bucket=hour&from=\(day.at(14))&to=\(day.at(9))", token: viewer)
        #expect(backwards.status == 200 && (backwards.json["buckets"] as? [String])?.isEmpty == true && backwards.json["truncated"] as? Bool == false)

        let keyboard = try app.client.request("GET", "/v1/apps/com.example.mail/keyboard", token: viewer)
        let groups = keyboard.json["groups"] as? [[String: Any]] ?? []
        let pad = try #require(groups.first { $0["model"] as? String == "iPad8,1" })
        #expect(pad["outlier"] as? Bool == true)
        let english = try #require(groups.first { $0["model"] as? String == "iPhone15,2" && $0["input_mode"] as? String == "en-US" })
        #expect(english["median"] as? Int == 216 && english["reports"] as? Int == 2 && english["outlier"] as? Bool == false)
        #expect(english["height_differs_by_input_mode"] as? [String] == ["ja-JP"])
    }
}
