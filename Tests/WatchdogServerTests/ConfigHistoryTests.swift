import Foundation
import Testing
import WatchdogStore
import WatchdogTesting

/// Issue 23, point 6: the config history is listed a page at a time without documents; a
/// version's documents (and so its diff) are fetched alone.
@Suite struct ConfigHistoryTests {
    static let history = "/v1/admin/apps/com.example.mail/config/history"

    /// A config of 64 rules, each with 20 builds of 64 characters (~100 KB), `flag` setting
    /// `auto_fix` so each save is a new version.
    static func bigConfig(_ flag: Bool) -> [String: Any] {
        let rules = (0..<64).map { index -> [String: Any] in
            ["id": "r\(index)", "name": String(repeating: "n", count: 120),
             "match": ["builds": (0..<20).map { String(format: "%064d", index * 100 + $0) }, "percent": 50],
             "set": ["auto_fix": flag]]
        }
        return ["defaults": ["auto_fix": !flag], "rules": rules]
    }

    @Test func thirtyOneVersionsOfASixtyFourRuleConfigGiveASmallHistoryPage() throws {
        let app = try TestApplication()
        _ = try app.addApp("com.example.mail")
        let admin = try app.addToken(role: "admin", name: "alice")
        for version in 1...31 {
            let body = Array(try JSONSerialization.data(withJSONObject: Self.bigConfig(version % 2 == 0)))
            let saved = try app.client.request("PUT", "/v1/admin/apps/com.example.mail/config", token: admin, body: body)
            #expect(saved.status == 200, "\(saved.text.prefix(300))")
        }
        let first = try app.client.request("GET", Self.history, token: admin)
        print("config history: first page \(first.body.count) bytes for 31 versions of \(Array(try JSONSerialization.data(withJSONObject: Self.bigConfig(true))).count)-byte documents")
        #expect(first.status == 200 && first.body.count < 4096, "\(first.body.count) bytes")
        let page = first.json["history"] as? [[String: Any]] ?? []
        #expect(page.compactMap { $0["version"] as? Int } == Array((12...31).reversed()), "the 20 newest")
        #expect(page.allSatisfy { $0["after"] == nil && $0["before"] == nil && $0["changed_by"] as? String == "alice" })
        let next = try #require(first.json["next"] as? String)
        #expect(next == "\(Self.history)?before=12&limit=20")

        let second = try app.client.request("GET", next, token: admin)
        #expect((second.json["history"] as? [[String: Any]])?.compactMap { $0["version"] as? Int } == Array((1...11).reversed()))
        #expect(second.json["next"] is NSNull, "the last page")

        let small = try app.client.request("GET", "\(Self.history)?limit=2&before=31", token: admin)
        #expect((small.json["history"] as? [[String: Any]])?.compactMap { $0["version"] as? Int } == [30, 29])
        #expect(small.json["next"] as? String == "\(Self.history)?before=29&limit=2")

        // The store pages in SQL: `limit` rows, older than `before`.
        #expect(try app.store.configVersions(app: "com.example.mail", before: nil, limit: 5).map(\.version) == [31, 30, 29, 28, 27])
        #expect(try app.store.configVersions(app: "com.example.mail", before: 10, limit: 3).map(\.version) == [9, 8, 7])

        // One version, opened: the document it made current and the one before, for the diff.
        let opened = try app.client.request("GET", "\(Self.history)/31", token: admin)
        let after = try #require(opened.json["after"] as? [String: Any])
        let before = try #require(opened.json["before"] as? [String: Any])
        #expect((after["rules"] as? [Any])?.count == 64 && (after["defaults"] as? [String: Any])?["auto_fix"] as? Bool == true)
        #expect((before["defaults"] as? [String: Any])?["auto_fix"] as? Bool == false)
    }

    @Test func pagesAreBoundedAndTheirParametersChecked() throws {
        let app = try TestApplication()
        _ = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let empty = try app.client.request("GET", Self.history, token: viewer)
        #expect(empty.status == 200 && (empty.json["history"] as? [Any])?.isEmpty == true && empty.json["next"] is NSNull, "\(empty.text)")
        for query in ["limit=0", "limit=101", "limit=x", "before=0", "before=abc", "before=-3", "before=1000000001"] {
            let response = try app.client.request("GET", "\(Self.history)?\(query)", token: viewer)
            #expect(response.status == 400 && response.errorCode == "invalid_parameter", "\(query) → \(response.status) \(response.text)")
        }
        #expect(try app.client.request("GET", "\(Self.history)?limit=100", token: viewer).status == 200)
        #expect(try app.client.request("GET", "/v1/admin/apps/com.example.none/config/history", token: viewer).status == 404)
    }
}
