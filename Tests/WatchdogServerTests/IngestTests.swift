import Foundation
import Gzip
import Testing
import WatchdogTesting

@Suite struct IngestTests {

    @Test func validBatchIsCountedExactlyAndARepostIsAllDuplicates() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        // The fixture's sessions (S-0 …), started: only a started session can be affected.
        let (reports, starts) = Fixtures.withStartedSessions(try Fixtures.validReports())
        let batch: [String: Any] = ["reports": reports]
        #expect(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": starts]).json["accepted"] as? Int == 5)

        let first = try app.client.postJSON("/v1/reports", token: key, json: batch)
        #expect(first.status == 202)
        #expect(first.json["accepted"] as? Int == 50)
        #expect(first.json["duplicates"] as? Int == 0)
        #expect((first.json["rejected"] as? [Any])?.isEmpty == true)

        let second = try app.client.postJSON("/v1/reports", token: key, json: batch)
        #expect(second.status == 202)
        #expect(second.json["accepted"] as? Int == 0)
        #expect(second.json["duplicates"] as? Int == 50)

        let stats = try app.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer)
        let release = try #require((stats.json["releases"] as? [[String: Any]])?.first)
        #expect(release["release"] as? String == "14.2.0 (31245)")
        #expect(release["reports_by_kind"] as? [String: Int] == ["view_frame_mismatch": 40, "interaction_lock": 10])
        #expect(release["reports"] as? Int == 50)
        #expect(release["affected_sessions"] as? Int == 5)
        #expect(try app.storedReportCount() == 50)
    }

    @Test func everyInvalidCaseGetsItsDocumentedOutcomeAndGoodNeighboursAreStored() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let cases = try #require(try Fixtures.json("reports/invalid-cases.json") as? [[String: Any]])
        #expect(cases.count == 7)
        var stored = 0
        for testCase in cases {
            let expect = testCase["expect"] as? String ?? ""
            let body = try #require(testCase["body"] as? [String: Any])
            guard let reports = body["reports"] as? [[String: Any]], !reports.isEmpty else {
                let response = try app.client.postJSON("/v1/reports", token: key, json: body)
                if expect.hasPrefix("wrong shape") {
                    #expect(response.status == 400, "\(expect)")
                    #expect(response.errorCode == "invalid_shape")
                } else {
                    // Documented choice: an empty batch is a no-op, 202 with nothing accepted.
                    #expect(response.status == 202, "\(expect)")
                    #expect(response.json["accepted"] as? Int == 0)
                }
                continue
            }
            let bad = reports[0]
            if expect.hasPrefix("app differs") {
                let alone = try app.client.postJSON("/v1/reports", token: key, json: ["reports": [bad]])
                #expect(alone.status == 403, "\(expect)")
                #expect(alone.errorCode == "forbidden")
            }
            let good = try Fixtures.freshReport()
            let response = try app.client.postJSON("/v1/reports", token: key, json: ["reports": [bad, good]])
            #expect(response.status == 202, "\(expect)")
            #expect(response.json["accepted"] as? Int == 1, "\(expect)")
            stored += 1
            let rejected = try #require((response.json["rejected"] as? [[String: Any]])?.first, "\(expect)")
            #expect(rejected["index"] as? Int == 0)
            #expect(rejected["id"] as? String == bad["id"] as? String, "\(expect)")
            let error = try #require(rejected["error"] as? [String: Any])
            let message = error["message"] as? String ?? ""
            let code = error["code"] as? String ?? ""
            switch expect {
            case let text where text.hasPrefix("kind missing"):
                #expect(message.hasPrefix("kind"), "\(message)")
            case let text where text.hasPrefix("negative width"):
                #expect(message.hasPrefix("view.expected.width must be a finite number ≥ 0"), "\(message)")
            case let text where text.hasPrefix("bad timestamp"):
                #expect(message.hasPrefix("occurred_at must be an RFC 3339 time"), "\(message)")
            case let text where text.hasPrefix("app differs"):
                #expect(code == "wrong_app", "\(message)")
            case let text where text.hasPrefix("log line over 1 KiB"):
                // Documented choice: the item is rejected, not truncated.
                #expect(message.hasPrefix("logs[0] must be at most 1024 bytes"), "\(message)")
            default:
                Issue.record("unexpected case \(expect)")
            }
        }
        #expect(try app.storedReportCount() == stored)
    }

    @Test func sessionsMakeRatesAndSuspectReportsAreCountedApart() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let sessions = (0..<10).map { _ in Fixtures.session() }
        let posted = try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": sessions])
        #expect(posted.status == 202)
        #expect(posted.json["accepted"] as? Int == 10)
        let again = try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": sessions])
        #expect(again.json["duplicates"] as? Int == 10)

        let firstSession = sessions[0]["id"] as? String
        let secondSession = sessions[1]["id"] as? String
        let reports = [
            try Fixtures.freshReport(sessionID: firstSession),
            try Fixtures.freshReport(sessionID: firstSession),
            try Fixtures.freshReport(sessionID: secondSession),
            try Fixtures.freshReport(sessionID: secondSession, appState: "background"),
        ]
        #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": reports]).status == 202)

        let stats = try app.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer)
        let release = try #require((stats.json["releases"] as? [[String: Any]])?.first)
        #expect(release["sessions"] as? Int == 10)
        #expect(release["reports"] as? Int == 3)
        #expect(release["suspect_reports"] as? Int == 1)
        #expect(release["affected_sessions"] as? Int == 2)
        #expect(release["glitch_free_session_rate"] as? Double == 0.8)
        #expect(release["reports_per_1k_sessions"] as? Double == 300)
    }

    @Test func releasesWithoutSessionsHaveNullRatesWithAReason() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": [try Fixtures.freshReport()]]).status == 202)
        let stats = try app.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer)
        let release = try #require((stats.json["releases"] as? [[String: Any]])?.first)
        #expect(release["glitch_free_session_rate"] is NSNull)
        #expect(release["reports_per_1k_sessions"] is NSNull)
        #expect((release["rates_unavailable_reason"] as? String)?.isEmpty == false)
    }

    @Test func releasesSortBySemanticVersionThenBuild() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let releases = [("14.9.1", "900"), ("14.10.0", "1000"), ("14.10.0", "999"), ("14.2.0-beta.2", "800"), ("14.2.0", "801"), ("2.0", "5")]
        let reports = try releases.map { try Fixtures.freshReport(version: $0.0, build: $0.1) }
        #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": reports]).status == 202)
        let stats = try app.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer)
        let order = (stats.json["releases"] as? [[String: Any]])?.compactMap { $0["release"] as? String }
        #expect(order == ["14.10.0 (1000)", "14.10.0 (999)", "14.9.1 (900)", "14.2.0 (801)", "14.2.0-beta.2 (800)", "2.0 (5)"])
        let apps = try app.client.request("GET", "/v1/apps", token: viewer)
        let listed = try #require((apps.json["apps"] as? [[String: Any]])?.first)
        #expect(listed["releases"] as? [String] == order)
    }

    @Test func duplicateIdsInsideOneBatchAreStoredOnce() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let report = try Fixtures.freshReport()
        var shouting = report
        shouting["id"] = (report["id"] as? String)?.uppercased()
        let response = try app.client.postJSON("/v1/reports", token: key, json: ["reports": [report, report, shouting]])
        #expect(response.json["accepted"] as? Int == 1)
        #expect(response.json["duplicates"] as? Int == 2)
        #expect(try app.storedReportCount() == 1)
    }
}
