import Foundation
import Testing
import WatchdogTesting

/// A syntax error inside one item of a batch costs that item only: its neighbours are stored
/// and the bad one is listed with its index (issue 13, point 7).
@Suite struct BatchSyntaxIsolationTests {
    /// The raw JSON text of a fresh valid report.
    static func goodItem() throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: try Fixtures.freshReport()), as: UTF8.self)
    }

    @Test func aSyntaxErrorInOneItemRejectsThatItemAlone() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let deep = String(repeating: "[", count: 70) + String(repeating: "]", count: 70)
        let badItems = [
            #"{"id": "a", "tolerance": NaN}"#,
            #"{"id": "b", "tolerance": Infinity}"#,
            #"{"id": "c", "visible": True}"#,
            #"{"id": "d", "deep": \#(deep)}"#,
            "{\"id\": \"e\", \"screen\": \"Compose\tController\"}",
            "NaN",
        ]
        var expectedStored = 0
        for bad in badItems {
            let body = "{\"reports\": [\(try Self.goodItem()), \(bad), \(try Self.goodItem())]}"
            let response = try app.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: Array(body.utf8))
            #expect(response.status == 202, "\(bad.prefix(40)) → \(response.status) \(response.text.prefix(200))")
            #expect(response.json["accepted"] as? Int == 2, "\(bad.prefix(40))")
            let rejected = response.json["rejected"] as? [[String: Any]] ?? []
            #expect(rejected.count == 1 && rejected.first?["index"] as? Int == 1, "\(bad.prefix(40)) → \(rejected)")
            #expect((rejected.first?["error"] as? [String: Any])?["code"] as? String == "invalid_json")
            expectedStored += 2
        }
        #expect(try app.storedReportCount() == expectedStored)
        // Broken structure between items still refuses the whole body: there is no item to blame.
        let broken = "{\"reports\": [\(try Self.goodItem()) \(try Self.goodItem())]}"
        let refused = try app.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: Array(broken.utf8))
        #expect(refused.status == 400)
        #expect(refused.errorCode == "invalid_json")
        #expect(try app.storedReportCount() == expectedStored)
    }
}
