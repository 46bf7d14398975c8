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

    @Test func malformedBodiesGet400AndTheDaemonKeepsServing() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let nested = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let bodies: [String] = [
            "", "{", "null", "[]", "{\"reports\": {}}", "{\"reports\": [1, \"x\", null]}", nested,
            "{\"reports\": [{\"id\": 1e999}]}", "\u{FEFF}{\"reports\": []}", "{\"reports\": [\(String(repeating: "{},", count: 600))]}",
        ]
        for body in bodies {
            let response = try daemon.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: Array(body.utf8))
            #expect([202, 400].contains(response.status), "\(body.prefix(40)) → \(response.status)")
            #expect(response.json["error"] != nil || response.json["accepted"] != nil)
        }
        let badUTF8: [UInt8] = Array("{\"reports\": [{\"id\": \"".utf8) + [0xff, 0xfe] + Array("\"}]}".utf8)
        #expect(try daemon.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: badUTF8).status == 400)
        let garbage = try daemon.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"], body: [1, 2, 3, 4])
        #expect(garbage.status == 400)
        #expect(garbage.errorCode == "invalid_gzip")
        let tooMany = try daemon.client.postJSON("/v1/reports", token: key, json: ["reports": Array(repeating: [String: String](), count: 501)])
        #expect(tooMany.errorCode == "too_many_items")
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

    @Test func keepAliveConnectionServesManyRequests() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        var raw = ""
        for _ in 0..<3 { raw += "GET /v1/config?app=com.example.mail HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\n\r\n" }
        raw += "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        let response = try daemon.client.exchange(Array(raw.utf8))
        #expect(response.status == 200)
        #expect(response.headers["connection"]?.lowercased() != "close")
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
        // A second --demo start on the same data keeps the data and prints fresh tokens.
        try daemon.restart(demo: true)
        #expect(try daemon.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer).json["releases"] as? [[String: Any]] != nil)
    }
}
