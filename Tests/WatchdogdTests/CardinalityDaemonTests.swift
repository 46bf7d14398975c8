import Foundation
import Testing

/// What a holder of the ingest key can do with many distinct names and odd dates, against the
/// real daemon: the roll-ups stay bounded, answers stay small, real figures stay as they were.
@Suite struct CardinalityDaemonTests {
    static let app = AlertDaemonTests.app

    /// The view-frame row of `by_kind` (what the junk must leave as it was).
    static func realKind(_ compare: [String: Any]) -> NSDictionary? {
        ((compare["by_kind"] as? [[String: Any]])?.first { $0["value"] as? String == "view_frame_mismatch" }).map { NSDictionary(dictionary: $0) }
    }

    /// A daemon with an app, a viewer token and releases 14.1.0 and 14.2.0 (build 1), each with
    /// `sessions` sessions of which the first `affected` glitched.
    static func twoReleases(sessions: Int, affected: (base: Int, target: Int)) throws -> (daemon: Daemon, key: String, viewer: String) {
        let daemon = try Daemon()
        let key = try daemon.addApp(Self.app)
        let viewer = try daemon.addToken(role: "viewer")
        try AlertDaemonTests.release(daemon, key: key, version: "14.1.0", sessions: sessions, affected: affected.base)
        try AlertDaemonTests.release(daemon, key: key, version: "14.2.0", sessions: sessions, affected: affected.target)
        return (daemon, key, viewer)
    }

    @Test func twentyThousandJunkKindsAndScreensLeaveCompareUnder64KiBAndTheRealKindAsItWas() throws {
        let (daemon, key, viewer) = try Self.twoReleases(sessions: 400, affected: (20, 80))
        let path = "/v1/apps/\(Self.app)/compare?base=14.1.0%20(1)&target=14.2.0%20(1)"
        let before = try daemon.client.request("GET", path, token: viewer)
        #expect(before.status == 200 && Self.realKind(before.json)?["verdict"] as? String == "regressed", "\(before.text.prefix(300))")

        // 20,000 reports, each of its own kind and screen, in 40 requests.
        let posting = Date()
        for request in 0..<40 {
            let reports = try (0..<500).map { index -> [String: Any] in
                let number = request * 500 + index
                var report = try Fixtures.freshReport(version: "14.2.0", build: "1", kind: "x-junk-\(number)")
                report["screen"] = "Junk screen \(number)"
                report["logs"] = nil
                report["attributes"] = nil
                report["install_id"] = nil
                return report
            }
            let response = try daemon.client.postJSON("/v1/reports", token: key, json: ["reports": reports])
            #expect(response.status == 202 && response.json["accepted"] as? Int == 500, "\(response.text.prefix(300))")
        }
        print("cardinality: 20,000 junk reports posted in \(Int(Date().timeIntervalSince(posting) * 1000)) ms")
        let started = Date()
        let after = try daemon.client.request("GET", path, token: viewer)
        let seconds = Date().timeIntervalSince(started)
        print("cardinality: compare after 20,000 junk kinds and screens is \(after.body.count) bytes, answered in \(Int(seconds * 1000)) ms")
        #expect(after.status == 200)
        #expect(after.body.count < 64 << 10, "compare is \(after.body.count) bytes")
        #expect(Self.realKind(after.json) == Self.realKind(before.json), "the real kind is compared as before")
        let kinds = try #require(after.json["by_kind"] as? [[String: Any]])
        #expect(kinds.last?["value"] as? String == "x-other")

        // Every report is stored; the roll-ups hold the capped values and one folded value.
        #expect(try daemon.storedReportCount() == 20_000 + 100)
        let storedKinds = try daemon.sql("SELECT count(*) FROM release_kinds WHERE app = '\(Self.app)' AND version = '14.2.0' AND kind LIKE 'x-%'")
        #expect(storedKinds.first?.first == "101", "100 custom kinds and x-other")
        let storedScreens = try daemon.sql("SELECT count(DISTINCT value) FROM release_breakdown WHERE app = '\(Self.app)' AND version = '14.2.0' AND dimension = 'screen'")
        #expect(storedScreens.first?.first == "501", "500 screens (the real one first) and (other)")
    }

    @Test func aSessionDated2007AndOneADayAheadLeaveTheOverlaysRealDaysDrawn() throws {
        // Both releases' sessions on the fixture reports' day, a glitch in 4 of 20.
        let (daemon, key, viewer) = try Self.twoReleases(sessions: 20, affected: (4, 4))
        var early = Fixtures.session(version: "14.2.0", build: "1")
        // The day after the protocol's earliest time (2007-01-09, the first iPhone): pinned by
        // the protocol, not by the clock.
        early["started_at"] = "2007-01-10T00:00:00Z"
        var ahead = Fixtures.session(version: "14.1.0", build: "1")
        ahead["started_at"] = ISO8601DateFormatter().string(from: Date().addingTimeInterval(23 * 3600))
        let posted = try daemon.client.postJSON("/v1/sessions", token: key, json: ["sessions": [early, ahead]])
        #expect(posted.status == 202 && posted.json["accepted"] as? Int == 2, "\(posted.text)")

        let overlay = try daemon.client.request("GET", "/v1/apps/\(Self.app)/overlay?base=14.1.0%20(1)&target=14.2.0%20(1)&bucket=day", token: viewer)
        #expect(overlay.status == 200, "\(overlay.text.prefix(300))")
        #expect(overlay.json["truncated"] as? Bool == false)
        let lines = try #require(overlay.json["releases"] as? [[String: Any]])
        #expect(lines.map { $0["aligned_start"] as? String } == [FixtureDay.reports.written(), FixtureDay.reports.written()])
        #expect(lines.map { ($0["sessions"] as? [Any])?.first as? Int } == [20, 20], "day 0 is each release's real first day")
        #expect(lines.map { ($0["reports"] as? [Any])?.first as? Int } == [4, 4])
        #expect(lines[1]["sessions_before_start"] as? Int == 1, "the 2007 session is counted, not drawn")
    }
}
