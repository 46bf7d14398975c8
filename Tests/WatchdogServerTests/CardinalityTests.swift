import Foundation
import Testing
@testable import WatchdogServer
import WatchdogStore
import WatchdogTesting

/// Distinct kinds, screens and views are capped at ingest (folded into `x-other` and
/// `(other)`), and every breakdown answer is cut to its top values whatever is stored.
@Suite struct CardinalityTests {
    static let app = VerdictTests.app

    /// A report of `kind` on `screen` with view `view`, without keyboard, in no session's name
    /// but its own.
    static func report(_ kind: String, screen: String? = "Compose", view: String? = nil, version: String = "14.2.0", build: String = "31245") throws -> [String: Any] {
        var report = try Fixtures.freshReport(version: version, build: build, kind: kind)
        report["screen"] = screen
        report["keyboard"] = nil
        report["view"] = view.map { ["name": $0, "expected": ["x": 0, "y": 0, "width": 1, "height": 1], "actual": ["x": 0, "y": 1, "width": 1, "height": 1]] }
        return report
    }

    @Test func customKindsPastTheAppsCapAreCountedAsXOtherWithTheirOwnBodyAndFingerprint() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let limits = CardinalityLimits()
        // The cap is per app: 60 kinds in 14.1.0, then 70 more in 14.2.0 — 30 past the cap.
        let kinds = (0..<(limits.customKindsPerApp + 30)).map { "x-kind-\($0)" }
        try VerdictTests.post(app, key: key, try kinds[..<60].map { try Self.report($0, version: "14.1.0", build: "1") })
        try VerdictTests.post(app, key: key, try kinds[60...].map { try Self.report($0) } + [try Self.report("x-kind-0"), try Self.report("view_frame_mismatch", view: "toolbar")])

        let releases = try #require(try app.store.releases(app: "com.example.mail"))
        let target = try #require(releases.first { $0.release.version == "14.2.0" })
        #expect(Set(target.reportsByKind.keys) == Set(kinds[60..<limits.customKindsPerApp] + ["x-kind-0", "x-other", "view_frame_mismatch"]))
        #expect(target.reportsByKind["x-other"] == 30, "the 30 kinds past the cap, one report each")

        // The folded reports are stored, with what the client sent and one fingerprint of the folded values.
        let stored = try app.storedReports().filter { $0.kind == "x-other" }
        #expect(stored.count == 30)
        #expect(Set(stored.compactMap { $0.body.firstMatch(of: /"kind":"(x-kind-\d+)"/)?.1 }.map(String.init)) == Set(kinds[limits.customKindsPerApp...]))
        let fingerprint = Fingerprint.of(kind: "x-other", screen: "Compose", viewName: nil, keyboardMode: nil)
        #expect(Set(stored.map(\.fingerprint)) == [fingerprint])
        let issues = try app.store.issues(app: "com.example.mail", release: target.release)
        #expect(issues.first { $0.fingerprint == fingerprint }?.reports == 30)
        #expect(issues.first { $0.fingerprint == fingerprint }?.kind == "x-other")
        #expect(issues.count == 40 + 3, "kinds 60–99, x-kind-0, view_frame_mismatch and x-other")
    }

    @Test func screensAndViewsPastAReleasesCapAreFoldedPerReleaseAndTheCapHoldsAfterARestart() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let limits = CardinalityLimits()
        let count = limits.screensPerRelease + 20
        try VerdictTests.post(app, key: key, try (0..<count).map { try Self.report("x-glitch", screen: "S-\($0)", view: "V-\($0)") })
        // Another release has caps of its own.
        try VerdictTests.post(app, key: key, try (0..<30).map { try Self.report("x-glitch", screen: "S-\(count + $0)", version: "14.1.0", build: "1") })

        func screens(_ version: String, _ build: String) throws -> [String: Int] {
            let detail = try #require(try app.store.releaseDetail(app: "com.example.mail", release: ReleaseID(version: version, build: build)))
            return Dictionary(detail.breakdown.filter { $0.dimension == "screen" }.map { ($0.value, $0.reports) }, uniquingKeysWith: +)
        }
        let target = try screens("14.2.0", "31245")
        #expect(target.count == limits.screensPerRelease + 1)
        #expect(target["(other)"] == 20)
        #expect(try screens("14.1.0", "1").count == 30, "14.1.0 is not folded by 14.2.0's cap")
        let issues = try app.store.issues(app: "com.example.mail", release: ReleaseID(version: "14.2.0", build: "31245"))
        #expect(Set(issues.compactMap(\.viewName)).count == limits.viewsPerRelease + 1)
        let folded = issues.filter { $0.screen == "(other)" }
        #expect(folded.count == 1 && folded.first?.viewName == "(other)" && folded.first?.reports == 20)
        #expect(folded.first?.fingerprint == Fingerprint.of(kind: "x-glitch", screen: "(other)", viewName: "(other)", keyboardMode: nil))

        // A restarted server reads the admitted values back: a new screen is folded, a known one is not.
        try app.restart()
        try VerdictTests.post(app, key: key, [try Self.report("x-glitch", screen: "S-new"), try Self.report("x-glitch", screen: "S-3")])
        let after = try screens("14.2.0", "31245")
        #expect(after.count == limits.screensPerRelease + 1)
        #expect(after["(other)"] == 21 && after["S-3"] == 2 && after["S-new"] == nil)
    }

    @Test func theRegistryKeepsABoundedNumberOfReleasesInMemoryAndReadsAForgottenOneBack() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        // Release 1.0 full (its cap of 3 screens reached), then 9 other releases touched.
        try VerdictTests.post(app, key: key, try (0..<3).map { try Self.report("x-glitch", screen: "S-\($0)", version: "1.0", build: "1") })
        let registry = CardinalityRegistry(store: app.store, limits: CardinalityLimits(screensPerRelease: 3, releasesInMemory: 4))
        func fold(_ screen: String, version: String) throws -> String? {
            var records = [ReportRecord(id: UUID().uuidString.lowercased(), app: "com.example.mail", version: version, build: "1", channel: nil, kind: "x-glitch",
                                        occurredAt: app.clock.now, sessionID: nil, installID: nil, isSuspect: false, screen: screen, autoFixed: false,
                                        testCrash: false, fingerprint: "", body: "{}")]
            registry.fold(&records)
            return records[0].screen
        }
        #expect(try fold("S-9", version: "1.0") == "(other)")
        for version in 2...10 { #expect(try fold("S-0", version: "\(version).0") == "S-0") }
        #expect(registry.releasesInMemory == 4)
        // 1.0 was forgotten: read again from the store, it is still full.
        #expect(try fold("S-10", version: "1.0") == "(other)")
        #expect(try fold("S-2", version: "1.0") == "S-2")
    }

    /// 300 kinds and 300 screens stored straight into the store (as before the caps, or by
    /// several nodes), and a real kind that regressed.
    static func storedPastTheCaps(_ app: TestApplication, key: String) throws {
        let base = try VerdictTests.sessions(app, key: key, version: "14.1.0", build: "1", count: 200)
        let target = try VerdictTests.sessions(app, key: key, version: "14.2.0", build: "2", count: 200)
        try VerdictTests.post(app, key: key, try base[..<10].map { try Fixtures.freshReport(version: "14.1.0", build: "1", kind: "view_frame_mismatch", sessionID: $0) }
            + target[..<80].map { try Fixtures.freshReport(version: "14.2.0", build: "2", kind: "view_frame_mismatch", sessionID: $0) })
        let now = app.clock.now
        let junk = (0..<300).map { index in
            ReportRecord(id: UUID().uuidString.lowercased(), app: "com.example.mail", version: "14.2.0", build: "2", channel: nil, kind: "x-junk-\(index)",
                         occurredAt: now - 3_600_000, sessionID: target[100 + index % 100], installID: "I-14.2.0-\(100 + index % 100)", isSuspect: false, screen: "J-\(index)", autoFixed: false,
                         testCrash: false, fingerprint: Fingerprint.of(kind: "x-junk-\(index)", screen: "J-\(index)", viewName: nil, keyboardMode: nil), body: "{}")
        }
        _ = try app.store.ingest([.reports(junk, receivedAt: now)])
    }

    @Test func compareAndTimeseriesAnswerTheTopValuesAndOneOtherRowWhateverIsStored() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        try Self.storedPastTheCaps(app, key: key)

        let compare = try app.client.request("GET", "\(Self.app)/compare?base=14.1.0&target=14.2.0", token: viewer)
        #expect(compare.status == 200, "\(compare.text)")
        let byKind = try #require(compare.json["by_kind"] as? [[String: Any]])
        #expect(byKind.count == BreakdownCut.defaultLimit + 1)
        let real = try #require(byKind.first { $0["value"] as? String == "view_frame_mismatch" })
        #expect(real["verdict"] as? String == "regressed")
        let other = try #require(byKind.last)
        #expect(other["value"] as? String == "x-other" && other["other_values"] as? Int == 301 - BreakdownCut.defaultLimit)
        #expect(other["verdict"] is NSNull && (other["reason"] as? String)?.contains("summed") == true)
        let targetReports = byKind.reduce(0) { $0 + (($1["target"] as? [String: Any])?["reports"] as? Int ?? 0) }
        #expect(targetReports == 380, "the other row sums what the cut leaves out")
        let byScreen = try #require(compare.json["by_screen"] as? [[String: Any]])
        #expect(byScreen.count == BreakdownCut.defaultLimit + 1 && byScreen.last?["value"] as? String == "(other)")
        #expect(byScreen.reduce(0) { $0 + (($1["target"] as? [String: Any])?["reports"] as? Int ?? 0) } == 380)
        let five = try app.client.request("GET", "\(Self.app)/compare?base=14.1.0&target=14.2.0&limit=5", token: viewer)
        #expect((five.json["by_kind"] as? [[String: Any]])?.count == 6)
        #expect(try app.client.request("GET", "\(Self.app)/compare?base=14.1.0&target=14.2.0&limit=0", token: viewer).status == 400)

        // A config rule's cohorts split the same kinds by install: cut alike.
        let admin = try app.addToken(role: "admin")
        #expect(try app.client.request("PATCH", "/v1/admin/apps/com.example.mail/config", token: admin,
                                       body: Array(#"{"rules": [{"id": "half", "name": "half", "match": {"percent": 50}, "set": {"auto_fix": true}}]}"#.utf8)).status == 200)
        let cohorts = try app.client.request("GET", "\(Self.app)/cohorts?release=14.2.0&rule=half", token: viewer)
        #expect(cohorts.status == 200, "\(cohorts.text)")
        let cohortKinds = try #require(cohorts.json["by_kind"] as? [[String: Any]])
        #expect(cohortKinds.count == BreakdownCut.defaultLimit + 1 && cohortKinds.last?["value"] as? String == "x-other")
        #expect(cohortKinds.last?["other_values"] as? Int == 301 - BreakdownCut.defaultLimit)

        let series = try app.client.request("GET", "\(Self.app)/timeseries?release=14.2.0", token: viewer)
        #expect(series.status == 200, "\(series.text)")
        let kinds = try #require(series.json["series"] as? [String: [Int]])
        #expect(kinds.count == BreakdownCut.defaultLimit + 1 && kinds["x-other"] != nil && kinds["view_frame_mismatch"] != nil)
        #expect(series.json["other_kinds"] as? Int == 300 - BreakdownCut.defaultLimit + 1)
        #expect(kinds.values.reduce(0) { $0 + $1.reduce(0, +) } == 380)
        #expect((series.json["rates"] as? [String: Any])?.count == kinds.count)
    }

    @Test func theKeyboardHistogramAnswersItsLargestGroupsAndCountsTheRest() throws {
        let app = try TestApplication()
        _ = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        // 150 device models stored as before the caps, model i with i + 1 reports.
        let records = (0..<150).flatMap { model in
            (0...model).map { _ in
                ReportRecord(id: UUID().uuidString.lowercased(), app: "com.example.mail", version: "14.2.0", build: "1", channel: nil, kind: "x-glitch",
                             occurredAt: app.clock.now, sessionID: nil, installID: nil, isSuspect: false, screen: nil, autoFixed: false, testCrash: false,
                             fingerprint: Fingerprint.of(kind: "x-glitch", screen: nil, viewName: nil, keyboardMode: "docked"), keyboardMode: "docked",
                             keyboardHeight: 216, inputMode: "en-US", deviceModel: "Model\(model)", body: "{}")
            }
        }
        _ = try app.store.ingest([.reports(records, receivedAt: app.clock.now)])
        let keyboard = try app.client.request("GET", "\(Self.app)/keyboard?release=14.2.0", token: viewer)
        #expect(keyboard.status == 200, "\(keyboard.text)")
        let groups = try #require(keyboard.json["groups"] as? [[String: Any]])
        #expect(groups.count == 100 && keyboard.json["other_groups"] as? Int == 50)
        #expect(groups.first?["model"] as? String == "Model149" && groups.last?["model"] as? String == "Model50", "the most reported")
        #expect((try app.client.request("GET", "\(Self.app)/keyboard?release=14.2.0&limit=3", token: viewer).json["groups"] as? [Any])?.count == 3)
    }
}
