import Foundation
import Testing

@Suite struct ProtocolTests {
    @Test func errorsHaveTheSpecShapeFor404And405And415() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let missing = try daemon.client.request("GET", "/v1/nothing-here")
        #expect(missing.status == 404)
        #expect(missing.errorCode == "not_found")
        let method = try daemon.client.request("PUT", "/v1/reports", token: key)
        #expect(method.status == 405)
        #expect(method.headers["allow"] == "POST")
        #expect(method.errorCode == "method_not_allowed")
        let form = try daemon.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "text/plain"], body: Array("{}".utf8))
        #expect(form.status == 415)
        #expect(form.errorCode == "unsupported_media_type")
        let encoding = try daemon.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json", "Content-Encoding": "br"], body: Array("{}".utf8))
        #expect(encoding.status == 415)
        #expect(encoding.headers["content-type"]?.hasPrefix("application/json") == true)
    }

    @Test func malformedBodiesGetTheirDocumentedStatusAndTheDaemonKeepsServing() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let nested = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let cases: [(body: String, status: Int, code: String?)] = [
            ("", 400, "invalid_json"), ("{", 400, "invalid_json"), ("null", 400, "invalid_shape"), ("[]", 400, "invalid_shape"),
            ("{\"reports\": {}}", 400, "invalid_shape"), (nested, 400, "invalid_json"), ("\u{FEFF}{\"reports\": []}", 400, "invalid_json"),
            ("{\"reports\": [], \"x\": nope}", 400, "invalid_json"), ("{\"reports\": [], \"reports\": []}", 400, "invalid_shape"),
            ("{\"reports\": [\(String(repeating: "{},", count: 600)){}]}", 400, "too_many_items"),
        ]
        for (body, status, code) in cases {
            let response = try daemon.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: Array(body.utf8))
            #expect(response.status == status, "\(body.prefix(40)) → \(response.status) \(response.text.prefix(200))")
            #expect(response.errorCode == code, "\(body.prefix(40))")
        }
        // Bad items in a good envelope: each rejected on its own, with null ids where unreadable.
        let items = try daemon.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"],
                                              body: Array(#"{"reports": [1, "x", null, {"id": 1e999}, {"id": "a", "id": "b"}]}"#.utf8))
        #expect(items.status == 202)
        let rejected = items.json["rejected"] as? [[String: Any]] ?? []
        #expect(rejected.count == 5)
        #expect(rejected.allSatisfy { $0["id"] is NSNull })
        #expect(rejected.compactMap { ($0["error"] as? [String: Any])?["code"] as? String } == ["invalid_type", "invalid_type", "invalid_type", "invalid_json", "invalid_json"])

        let badUTF8: [UInt8] = Array("{\"reports\": [{\"id\": \"".utf8) + [0xff, 0xfe] + Array("\"}]}".utf8)
        #expect(try daemon.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: badUTF8).errorCode == "invalid_json")
        let garbage = try daemon.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"], body: [1, 2, 3, 4])
        #expect(garbage.status == 400)
        #expect(garbage.errorCode == "invalid_gzip")
        var huge = try Fixtures.freshReport()
        huge["padding"] = String(repeating: "p", count: 300_000)
        let tooBig = try daemon.client.postJSON("/v1/reports", token: key, json: ["reports": [huge]])
        #expect(((tooBig.json["rejected"] as? [[String: Any]])?.first?["error"] as? [String: Any])?["code"] as? String == "item_too_large")
        #expect(try daemon.client.request("GET", "/healthz").status == 200)
        #expect(try daemon.storedReportCount() == 0)
    }

    @Test func tenThousandAttributesOversizedHeadersAndNonJSONNumbersAreRefusedAndNothingIsStored() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        var crowded = try Fixtures.freshReport()
        crowded["attributes"] = Dictionary(uniqueKeysWithValues: (0..<10_000).map { ("a\($0)", "v") })
        let response = try daemon.client.postJSON("/v1/reports", token: key, json: ["reports": [crowded]])
        #expect(response.status == 202)
        let code = ((response.json["rejected"] as? [[String: Any]])?.first?["error"] as? [String: Any])?["code"] as? String
        #expect(code == "invalid_field" || code == "item_too_large", "\(code ?? "none")")
        for number in ["NaN", "Infinity", "-Infinity", "1e999", "0x10", "+1", ".5"] {
            let body = #"{"reports": [{"id": "83223034-6633-586d-bdb9-a5c502f73ae9", "tolerance": \#(number)}]}"#
            let result = try daemon.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: Array(body.utf8))
            let refused = result.status == 400 || ((result.json["rejected"] as? [[String: Any]])?.count == 1)
            #expect(refused, "\(number) → \(result.status)")
        }
        // Headers beyond libmicrohttpd's per-connection memory (32 KiB) are refused by it (431).
        let huge = try daemon.client.request("GET", "/healthz", headers: ["X-Padding": String(repeating: "p", count: 40_000)])
        #expect(huge.status == 431 || huge.status == 413)
        #expect(try daemon.client.request("GET", "/healthz").status == 200)
        #expect(try daemon.storedReportCount() == 0)
    }

    @Test func typeErrorsNameTheFieldAndWhatWouldBeValid() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        var report = try Fixtures.freshReport()
        var view = report["view"] as? [String: Any] ?? [:]
        var expected = view["expected"] as? [String: Any] ?? [:]
        expected["width"] = "wide"
        view["expected"] = expected
        report["view"] = view
        var missingRelease = try Fixtures.freshReport()
        missingRelease["release"] = ["version": "14.2.0"]
        let response = try daemon.client.postJSON("/v1/reports", token: key, json: ["reports": [report, missingRelease]])
        let rejected = response.json["rejected"] as? [[String: Any]] ?? []
        let messages = rejected.compactMap { ($0["error"] as? [String: Any])?["message"] as? String }
        #expect(messages == ["view.expected.width must be a number", "release.build is required"])
    }

    @Test func oneKeepAliveConnectionCarriesPipelinedPostsAndGets() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let connection = try KeepAliveConnection(port: daemon.port)
        var pipeline: [UInt8] = []
        for _ in 0..<3 {
            let body = Array(try JSONSerialization.data(withJSONObject: ["reports": [try Fixtures.freshReport()]]))
            pipeline += KeepAliveConnection.post("/v1/reports", token: key, body: body)
        }
        pipeline += Array("GET /v1/config?app=com.example.mail HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\n\r\n".utf8)
        try connection.write(pipeline)
        var statuses: [Int] = []
        for _ in 0..<4 {
            let response = try #require(try connection.readResponse())
            statuses.append(response.status)
            #expect(response.headers["connection"]?.lowercased() != "close")
        }
        #expect(statuses == [202, 202, 202, 200])
        #expect(try daemon.storedReportCount() == 3)
    }

    @Test func administrativeCommandsWorkWhileServing() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        #expect(key.hasPrefix("wdi_") && !key.contains("\n"))
        let again = try daemon.runCommand(["apps", "add", "com.example.mail"])
        #expect(again.status != 0)
        #expect(again.stdout.isEmpty)
        let viewer = try daemon.addToken(role: "viewer", name: "qa")
        #expect(try daemon.client.request("GET", "/v1/apps", token: viewer).status == 200)
        #expect(try daemon.runCommand(["tokens", "add", "--role", "root", "x"]).status != 0)
    }

    @Test func demoShowsTheOlderReleaseWithAboutFourTimesMoreGlitches() throws {
        let daemon = try Daemon(demo: true)
        let viewer = try #require(daemon.exports["WATCHDOG_VIEWER_TOKEN"])
        let releases = try daemon.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer).json["releases"] as? [[String: Any]] ?? []
        #expect(releases.count == 2)
        let newer = try #require(releases.first?["reports_per_1k_sessions"] as? Double)
        let older = try #require(releases.last?["reports_per_1k_sessions"] as? Double)
        #expect(older / newer > 3 && older / newer < 5.5)
        #expect(try daemon.client.request("GET", "/").text.contains("watchdogd"))
        // A second --demo start on the same data keeps the data and replaces the demo tokens.
        try daemon.restart(demo: true)
        let fresh = try #require(daemon.exports["WATCHDOG_VIEWER_TOKEN"])
        #expect(fresh != viewer)
        #expect((try daemon.client.request("GET", "/v1/apps/com.example.mail/releases", token: fresh).json["releases"] as? [[String: Any]])?.count == 2)
        #expect(try daemon.client.request("GET", "/v1/apps", token: viewer).status == 401, "the previous demo token was revoked")
    }
}
