import Foundation
import Gzip
import Testing

@Suite struct IngestTests {
    @Test func validBatchIsCountedExactlyAndARepostIsAllDuplicates() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let viewer = try daemon.addToken(role: "viewer")
        let batch = try Fixtures.json("reports/valid-batch.json")

        let first = try daemon.client.postJSON("/v1/reports", token: key, json: batch)
        #expect(first.status == 202)
        #expect(first.json["accepted"] as? Int == 50)
        #expect(first.json["duplicates"] as? Int == 0)
        #expect((first.json["rejected"] as? [Any])?.isEmpty == true)

        let second = try daemon.client.postJSON("/v1/reports", token: key, json: batch)
        #expect(second.status == 202)
        #expect(second.json["accepted"] as? Int == 0)
        #expect(second.json["duplicates"] as? Int == 50)

        let stats = try daemon.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer)
        let release = try #require((stats.json["releases"] as? [[String: Any]])?.first)
        #expect(release["release"] as? String == "14.2.0 (31245)")
        #expect(release["reports_by_kind"] as? [String: Int] == ["view_frame_mismatch": 40, "interaction_lock": 10])
        #expect(release["reports"] as? Int == 50)
        #expect(release["affected_sessions"] as? Int == 5)
        #expect(try daemon.storedReportCount() == 50)
    }

    @Test func everyInvalidCaseGetsItsDocumentedOutcomeAndGoodNeighboursAreStored() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let cases = try #require(try Fixtures.json("reports/invalid-cases.json") as? [[String: Any]])
        #expect(cases.count == 7)
        var stored = 0
        for testCase in cases {
            let expect = testCase["expect"] as? String ?? ""
            let body = try #require(testCase["body"] as? [String: Any])
            guard let reports = body["reports"] as? [[String: Any]], !reports.isEmpty else {
                let response = try daemon.client.postJSON("/v1/reports", token: key, json: body)
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
                let alone = try daemon.client.postJSON("/v1/reports", token: key, json: ["reports": [bad]])
                #expect(alone.status == 403, "\(expect)")
                #expect(alone.errorCode == "forbidden")
            }
            let good = try Fixtures.freshReport()
            let response = try daemon.client.postJSON("/v1/reports", token: key, json: ["reports": [bad, good]])
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
        #expect(try daemon.storedReportCount() == stored)
    }

    @Test func gzipBodyIsAccepted() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let json = Array(try JSONSerialization.data(withJSONObject: try Fixtures.json("reports/valid-batch.json")))
        let response = try daemon.client.request("POST", "/v1/reports", token: key,
                                                 headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"],
                                                 body: try Gzip.compress(json))
        #expect(response.status == 202)
        #expect(response.json["accepted"] as? Int == 50)
    }

    @Test func bodiesOverOneMebibyteAreRefusedWith413AndNothingIsStored() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        // Valid JSON of 1.1 MiB: 450 reports each with a long attribute would be valid item by item.
        var reports: [[String: Any]] = []
        for _ in 0..<450 {
            var report = try Fixtures.freshReport()
            report["logs"] = (0..<3).map { _ in String(repeating: "x", count: 900) }
            reports.append(report)
        }
        let json = Array(try JSONSerialization.data(withJSONObject: ["reports": reports]))
        #expect(json.count > 1 << 20)

        let declared = try daemon.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: json)
        #expect(declared.status == 413)
        #expect(declared.errorCode == "payload_too_large")

        // Without Content-Length (chunked), the cap is enforced while streaming.
        var chunked: [UInt8] = []
        for start in stride(from: 0, to: json.count, by: 65536) {
            let piece = json[start..<min(start + 65536, json.count)]
            chunked += Array(String(piece.count, radix: 16).utf8) + [13, 10] + piece + [13, 10]
        }
        chunked += Array("0\r\n\r\n".utf8)
        let streamed = try daemon.client.request("POST", "/v1/reports", token: key,
                                                 headers: ["Content-Type": "application/json", "Transfer-Encoding": "chunked"], body: chunked)
        #expect(streamed.status == 413)

        // Small on the wire, over the cap once inflated.
        let compressed = try Gzip.compress(json)
        #expect(compressed.count < 1 << 20)
        let inflated = try daemon.client.request("POST", "/v1/reports", token: key,
                                                 headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"], body: compressed)
        #expect(inflated.status == 413)
        #expect(inflated.errorMessage?.contains("after gzip decompression") == true)

        #expect(try daemon.storedReportCount() == 0)
        #expect(try daemon.client.request("GET", "/healthz").status == 200)
    }

    @Test func sessionsMakeRatesAndSuspectReportsAreCountedApart() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let viewer = try daemon.addToken(role: "viewer")
        let sessions = (0..<10).map { _ in Fixtures.session() }
        let posted = try daemon.client.postJSON("/v1/sessions", token: key, json: ["sessions": sessions])
        #expect(posted.status == 202)
        #expect(posted.json["accepted"] as? Int == 10)
        let again = try daemon.client.postJSON("/v1/sessions", token: key, json: ["sessions": sessions])
        #expect(again.json["duplicates"] as? Int == 10)

        let firstSession = sessions[0]["id"] as? String
        let secondSession = sessions[1]["id"] as? String
        let reports = [
            try Fixtures.freshReport(sessionID: firstSession),
            try Fixtures.freshReport(sessionID: firstSession),
            try Fixtures.freshReport(sessionID: secondSession),
            try Fixtures.freshReport(sessionID: secondSession, appState: "background"),
        ]
        #expect(try daemon.client.postJSON("/v1/reports", token: key, json: ["reports": reports]).status == 202)

        let stats = try daemon.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer)
        let release = try #require((stats.json["releases"] as? [[String: Any]])?.first)
        #expect(release["sessions"] as? Int == 10)
        #expect(release["reports"] as? Int == 3)
        #expect(release["suspect_reports"] as? Int == 1)
        #expect(release["affected_sessions"] as? Int == 2)
        #expect(release["glitch_free_session_rate"] as? Double == 0.8)
        #expect(release["reports_per_1k_sessions"] as? Double == 300)
    }

    @Test func releasesWithoutSessionsHaveNullRatesWithAReason() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let viewer = try daemon.addToken(role: "viewer")
        #expect(try daemon.client.postJSON("/v1/reports", token: key, json: ["reports": [try Fixtures.freshReport()]]).status == 202)
        let stats = try daemon.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer)
        let release = try #require((stats.json["releases"] as? [[String: Any]])?.first)
        #expect(release["glitch_free_session_rate"] is NSNull)
        #expect(release["reports_per_1k_sessions"] is NSNull)
        #expect((release["rates_unavailable_reason"] as? String)?.isEmpty == false)
    }

    @Test func releasesSortBySemanticVersionThenBuild() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let viewer = try daemon.addToken(role: "viewer")
        let releases = [("14.9.1", "900"), ("14.10.0", "1000"), ("14.10.0", "999"), ("14.2.0-beta.2", "800"), ("14.2.0", "801"), ("2.0", "5")]
        let reports = try releases.map { try Fixtures.freshReport(version: $0.0, build: $0.1) }
        #expect(try daemon.client.postJSON("/v1/reports", token: key, json: ["reports": reports]).status == 202)
        let stats = try daemon.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer)
        let order = (stats.json["releases"] as? [[String: Any]])?.compactMap { $0["release"] as? String }
        #expect(order == ["14.10.0 (1000)", "14.10.0 (999)", "14.9.1 (900)", "14.2.0 (801)", "14.2.0-beta.2 (800)", "2.0 (5)"])
        let apps = try daemon.client.request("GET", "/v1/apps", token: viewer)
        let app = try #require((apps.json["apps"] as? [[String: Any]])?.first)
        #expect(app["releases"] as? [String] == order)
    }

    @Test func duplicateIdsInsideOneBatchAreStoredOnce() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let report = try Fixtures.freshReport()
        var shouting = report
        shouting["id"] = (report["id"] as? String)?.uppercased()
        let response = try daemon.client.postJSON("/v1/reports", token: key, json: ["reports": [report, report, shouting]])
        #expect(response.json["accepted"] as? Int == 1)
        #expect(response.json["duplicates"] as? Int == 2)
        #expect(try daemon.storedReportCount() == 1)
    }
}
