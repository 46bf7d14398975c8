import Foundation
import Testing
import WatchdogTesting

@Suite struct ProtocolTests {

    @Test func errorsHaveTheSpecShapeFor404And405And415OfTheRouter() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let missing = try app.client.request("GET", "/v1/nothing-here")
        #expect(missing.status == 404)
        #expect(missing.errorCode == "not_found")
        let method = try app.client.request("PUT", "/v1/reports", token: key)
        #expect(method.status == 405)
        #expect(method.headers["allow"] == "POST")
        #expect(method.errorCode == "method_not_allowed")
        let form = try app.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "text/plain"], body: Array("{}".utf8))
        #expect(form.status == 415)
        #expect(form.errorCode == "unsupported_media_type")
    }

    @Test func malformedBodiesGetTheirDocumentedStatusAndTheServerKeepsServing() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let nested = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let cases: [(body: String, status: Int, code: String?)] = [
            ("", 400, "invalid_json"), ("{", 400, "invalid_json"), ("null", 400, "invalid_shape"), ("[]", 400, "invalid_shape"),
            ("{\"reports\": {}}", 400, "invalid_shape"), (nested, 400, "invalid_json"), ("\u{FEFF}{\"reports\": []}", 400, "invalid_json"),
            ("{\"reports\": [], \"x\": nope}", 400, "invalid_json"), ("{\"reports\": [], \"reports\": []}", 400, "invalid_shape"),
            ("{\"reports\": [\(String(repeating: "{},", count: 600)){}]}", 400, "too_many_items"),
        ]
        for (body, status, code) in cases {
            let response = try app.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: Array(body.utf8))
            #expect(response.status == status, "\(body.prefix(40)) → \(response.status) \(response.text.prefix(200))")
            #expect(response.errorCode == code, "\(body.prefix(40))")
        }
        // Bad items in a good envelope: each rejected on its own, with null ids where unreadable.
        let items = try app.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"],
                                              body: Array(#"{"reports": [1, "x", null, {"id": 1e999}, {"id": "a", "id": "b"}]}"#.utf8))
        #expect(items.status == 202)
        let rejected = items.json["rejected"] as? [[String: Any]] ?? []
        #expect(rejected.count == 5)
        #expect(rejected.allSatisfy { $0["id"] is NSNull })
        #expect(rejected.compactMap { ($0["error"] as? [String: Any])?["code"] as? String } == ["invalid_type", "invalid_type", "invalid_type", "invalid_json", "invalid_json"])

        let badUTF8: [UInt8] = Array("{\"reports\": [{\"id\": \"".utf8) + [0xff, 0xfe] + Array("\"}]}".utf8)
        #expect(try app.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: badUTF8).errorCode == "invalid_json")
        var huge = try Fixtures.freshReport()
        huge["padding"] = String(repeating: "p", count: 300_000)
        let tooBig = try app.client.postJSON("/v1/reports", token: key, json: ["reports": [huge]])
        #expect(((tooBig.json["rejected"] as? [[String: Any]])?.first?["error"] as? [String: Any])?["code"] as? String == "item_too_large")
        #expect(try app.client.request("GET", "/healthz").status == 200)
        #expect(try app.storedReportCount() == 0)
    }

    @Test func tenThousandAttributesAndNonJSONNumbersAreRefusedAndNothingIsStored() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        var crowded = try Fixtures.freshReport()
        crowded["attributes"] = Dictionary(uniqueKeysWithValues: (0..<10_000).map { ("a\($0)", "v") })
        let response = try app.client.postJSON("/v1/reports", token: key, json: ["reports": [crowded]])
        #expect(response.status == 202)
        let code = ((response.json["rejected"] as? [[String: Any]])?.first?["error"] as? [String: Any])?["code"] as? String
        #expect(code == "invalid_field" || code == "item_too_large", "\(code ?? "none")")
        for number in ["NaN", "Infinity", "-Infinity", "1e999", "0x10", "+1", ".5"] {
            let body = #"{"reports": [{"id": "83223034-6633-586d-bdb9-a5c502f73ae9", "tolerance": \#(number)}]}"#
            let result = try app.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: Array(body.utf8))
            let refused = result.status == 400 || ((result.json["rejected"] as? [[String: Any]])?.count == 1)
            #expect(refused, "\(number) → \(result.status)")
        }
        #expect(try app.client.request("GET", "/healthz").status == 200)
        #expect(try app.storedReportCount() == 0)
    }

    @Test func typeErrorsNameTheFieldAndWhatWouldBeValid() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        var report = try Fixtures.freshReport()
        var view = report["view"] as? [String: Any] ?? [:]
        var expected = view["expected"] as? [String: Any] ?? [:]
        expected["width"] = "wide"
        view["expected"] = expected
        report["view"] = view
        var missingRelease = try Fixtures.freshReport()
        missingRelease["release"] = ["version": "14.2.0"]
        var keyboardFrame = try Fixtures.freshReport()
        keyboardFrame["keyboard"] = ["mode": "docked", "frame": ["x": 0, "y": "low", "width": 390, "height": 300]]
        var notAnObject = try Fixtures.freshReport()
        notAnObject["keyboard"] = ["mode": "docked", "frame": [0, 1]]
        let response = try app.client.postJSON("/v1/reports", token: key, json: ["reports": [report, missingRelease, keyboardFrame, notAnObject]])
        let rejected = response.json["rejected"] as? [[String: Any]] ?? []
        let messages = rejected.compactMap { ($0["error"] as? [String: Any])?["message"] as? String }
        #expect(messages == ["view.expected.width must be a number", "release.build is required", "keyboard.frame.y must be a number",
                             "keyboard.frame must be an object"])
    }
}
