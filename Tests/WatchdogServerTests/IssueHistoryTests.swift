import Foundation
import Testing
import WatchdogTesting

/// What `issues` reads from a fingerprint's other releases: its first release (the oldest by
/// version with headline reports) and its row in the previous release.
@Suite struct IssueHistoryTests {
    @Test func firstReleaseIsTheOldestVersionWithHeadlineReportsWhateverTheOrderTheyArrived() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        for (version, build) in [("1.0", "1"), ("1.1", "2"), ("1.2", "3")] {
            let sessions = (0..<10).map { _ in Fixtures.session(version: version, build: build) }
            #expect(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": sessions]).status == 202)
        }
        func post(_ kind: String, _ version: String, _ build: String, count: Int = 2, appState: String = "active") throws {
            let reports = try (0..<count).map { _ in try Fixtures.freshReport(version: version, build: build, kind: kind, appState: appState) }
            #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": reports]).status == 202)
        }
        // x-seen-later: only in the background in 1.0, so first seen in 1.1.
        try post("x-seen-later", "1.0", "1", appState: "background")
        try post("x-seen-later", "1.1", "2", count: 3)
        try post("x-seen-later", "1.2", "3")
        // x-only-now: background-only before 1.2: new in 1.2, with nothing in the previous release.
        try post("x-only-now", "1.0", "1", appState: "background")
        try post("x-only-now", "1.1", "2", appState: "background")
        try post("x-only-now", "1.2", "3")
        // x-old: posted to 1.2 first and to 1.0 last; 1.0 is still its first release.
        try post("x-old", "1.2", "3")
        try post("x-old", "1.0", "1")

        let response = try app.client.request("GET", "/v1/apps/com.example.mail/issues?release=1.2", token: viewer)
        #expect(response.status == 200, "\(response.text)")
        let issues = Dictionary(uniqueKeysWithValues: (response.json["issues"] as? [[String: Any]] ?? []).map { ($0["kind"] as? String ?? "", $0) })
        #expect(issues.count == 3)

        let seenLater = try #require(issues["x-seen-later"])
        #expect(seenLater["first_release"] as? String == "1.1 (2)")
        #expect(seenLater["new"] as? Bool == false)
        #expect(seenLater["previous_release"] as? String == "1.1 (2)")
        #expect((seenLater["previous"] as? [String: Any])?["reports"] as? Int == 3)
        #expect(((seenLater["trend"] as? [String: Any])?["base"] as? [String: Any])?["reports"] as? Int == 3)

        let onlyNow = try #require(issues["x-only-now"])
        #expect(onlyNow["first_release"] as? String == "1.2 (3)")
        #expect(onlyNow["new"] as? Bool == true)
        #expect((onlyNow["previous"] as? [String: Any])?["reports"] as? Int == 0, "background reports are not the previous release's figure")
        #expect((onlyNow["previous"] as? [String: Any])?["affected_sessions"] as? Int == 0)

        let old = try #require(issues["x-old"])
        #expect(old["first_release"] as? String == "1.0 (1)")
        #expect(old["new"] as? Bool == false)
        #expect((old["previous"] as? [String: Any])?["reports"] as? Int == 0, "not in 1.1")

        // The oldest release's own issues are all new there, background-only rows included.
        let oldest = try app.client.request("GET", "/v1/apps/com.example.mail/issues?release=1.0", token: viewer)
        let oldestIssues = oldest.json["issues"] as? [[String: Any]] ?? []
        #expect(oldestIssues.count == 3)
        #expect(oldestIssues.allSatisfy { $0["new"] as? Bool == true && $0["first_release"] as? String == "1.0 (1)" && $0["previous"] is NSNull })
    }
}
