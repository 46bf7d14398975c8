import Foundation
import Testing
import WatchdogTesting

/// `client_dropped` in a reports batch: validated, counted per release in the same
/// transaction as the batch, once per id, shown in the releases list.
@Suite struct ClientDroppedTests {
    static func dropped(id: String = UUID().uuidString.lowercased(), version: String = "14.2.0", evicted: Any = 3, quarantined: Any = 1) -> [String: Any] {
        ["id": id, "release": ["version": version, "build": "31245"], "evicted": evicted, "quarantined": quarantined]
    }

    func releaseStats(_ app: TestApplication, viewer: String, _ name: String) throws -> [String: Any]? {
        let stats = try app.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer)
        return (stats.json["releases"] as? [[String: Any]])?.first { $0["release"] as? String == name }
    }

    @Test func countsArriveWithTheBatchOncePerIdAndInvalidOnesAreRefused() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        #expect(try releaseStats(app, viewer: viewer, "14.2.0 (31245)") == nil)

        let drop = Self.dropped(evicted: 3, quarantined: 1)
        let first = try app.client.postJSON("/v1/reports", token: key, json: ["reports": [try Fixtures.freshReport()], "client_dropped": drop])
        #expect(first.status == 202)
        #expect(first.json["accepted"] as? Int == 1)
        var release = try #require(try releaseStats(app, viewer: viewer, "14.2.0 (31245)"))
        #expect(release["client_evicted"] as? Int == 3)
        #expect(release["client_quarantined"] as? Int == 1)

        // The same batch again (its answer was lost): not counted twice.
        let again = try app.client.postJSON("/v1/reports", token: key, json: ["reports": [], "client_dropped": drop])
        #expect(again.status == 202)
        // A new count with no reports left to send still arrives.
        let alone = try app.client.postJSON("/v1/reports", token: key, json: ["reports": [], "client_dropped": Self.dropped(evicted: 10, quarantined: 0)])
        #expect(alone.status == 202)
        #expect(alone.json["accepted"] as? Int == 0)
        release = try #require(try releaseStats(app, viewer: viewer, "14.2.0 (31245)"))
        #expect(release["client_evicted"] as? Int == 13)
        #expect(release["client_quarantined"] as? Int == 1)

        for bad in [Self.dropped(evicted: -1), Self.dropped(quarantined: 1_000_000_001), Self.dropped(evicted: 1.5), Self.dropped(evicted: "2"),
                    Self.dropped(version: ""), Self.dropped(version: String(repeating: "9", count: 65)), Self.dropped(id: "not-a-uuid"),
                    ["release": ["version": "14.2.0", "build": "31245"], "evicted": 1] as [String: Any], ["evicted": 1, "quarantined": 1]] {
            let response = try app.client.postJSON("/v1/reports", token: key, json: ["reports": [try Fixtures.freshReport()], "client_dropped": bad])
            #expect(response.status == 400, "\(bad)")
            #expect(response.errorCode == "invalid_client_dropped", "\(bad)")
        }
        #expect(try app.storedReportCount() == 1, "a refused batch stores nothing")
        release = try #require(try releaseStats(app, viewer: viewer, "14.2.0 (31245)"))
        #expect(release["client_evicted"] as? Int == 13)

        // An item the server cannot read is rejected on its own; the counts beside it still count.
        let good = try JSONSerialization.data(withJSONObject: try Fixtures.freshReport())
        let counts = try JSONSerialization.data(withJSONObject: Self.dropped(evicted: 2, quarantined: 5))
        let body = Array(#"{"reports":[{"id":1e999},"#.utf8) + Array(good) + Array(#"],"client_dropped":"#.utf8) + Array(counts) + Array("}".utf8)
        let mixed = try app.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: body)
        #expect(mixed.status == 202)
        #expect(mixed.json["accepted"] as? Int == 1)
        #expect((mixed.json["rejected"] as? [Any])?.count == 1)
        release = try #require(try releaseStats(app, viewer: viewer, "14.2.0 (31245)"))
        #expect(release["client_evicted"] as? Int == 15)
        #expect(release["client_quarantined"] as? Int == 6)

        // Sessions batches do not read it (unknown members are ignored there, as before).
        let sessions = try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": [Fixtures.session()], "client_dropped": ["evicted": -1]])
        #expect(sessions.status == 202)
    }
}
