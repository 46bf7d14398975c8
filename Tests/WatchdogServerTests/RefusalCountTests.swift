import Foundation
import Testing
import WatchdogStore
import WatchdogTesting

/// Refused attestations and uploads by code over the last 24 hours (issue 44): counted in
/// memory per app, kind, code and hour, added to the store's once a minute, so they hold for a
/// cluster and across a restart; an app that does not exist gets no row.
@Suite struct RefusalCountTests {
    static let app = "com.example.mail"
    static let path = "/v1/admin/apps/com.example.mail/attestation/refusals"

    /// `code: count` of `kind` in the answer.
    static func counts(_ app: TestApplication, token: String, kind: String) throws -> [String: Int] {
        let answer = try app.client.request("GET", path, token: token)
        #expect(answer.status == 200, "\(answer.text)")
        let rows = try #require(answer.json["refusals"] as? [[String: Any]], "\(answer.text)")
        return Dictionary(rows.filter { $0["kind"] as? String == kind }.map { ($0["code"] as! String, $0["count"] as! Int) }, uniquingKeysWith: +)
    }

    static func requireAttestation(_ app: TestApplication, admin: String) throws {
        let put = try app.client.request("PUT", "/v1/admin/apps/\(Self.app)/attestation", token: admin,
                                         body: Array(#"{"mode": "require", "team_id": "ABCDE12345", "bundle_id": "com.example.mail"}"#.utf8))
        #expect(put.status == 200, "\(put.text)")
    }

    static func unattestedUpload(_ app: TestApplication, key: String, headers: [String: String] = [:]) throws -> Int {
        try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": [["id": UUID().uuidString, "install_id": "i-1", "app": Self.app,
                                                                              "started_at": "2026-11-20T10:00:00.000Z",
                                                                              "release": ["version": "14.2.0", "build": "1"]]]],
                                headers: headers).status
    }

    @Test func refusalsAreCountedByCodeAndStoredOnceAMinuteWithoutCountingTwice() throws {
        let app = try TestApplication()
        let key = try app.addApp(Self.app)
        let admin = try app.addToken(role: "admin", name: "admin")
        let viewer = try app.addToken(role: "viewer", name: "viewer", apps: [Self.app])
        try Self.requireAttestation(app, admin: admin)
        for _ in 0..<3 { #expect(try Self.unattestedUpload(app, key: key) == 401) }
        #expect(try Self.unattestedUpload(app, key: key, headers: ["Watchdog-Assertion": "not base64"]) == 400)
        let attest = try app.client.postJSON("/v1/attest", token: key, json: ["install_id": "i-1", "key_id": Data(repeating: 1, count: 32).base64EncodedString(),
                                                                             "challenge": Data(repeating: 2, count: 32).base64EncodedString(),
                                                                             "attestation": Data(repeating: 3, count: 64).base64EncodedString()])
        #expect(attest.status == 403 && (attest.json["error"] as? [String: Any])?["code"] as? String == "challenge_unknown", "\(attest.text)")

        // Before the minute's flush, this node's counts are answered already.
        let expected = ["assertion_required": 3, "assertion_malformed": 1]
        #expect(try Self.counts(app, token: viewer, kind: "upload") == expected)
        #expect(try Self.counts(app, token: viewer, kind: "attestation") == ["challenge_unknown": 1])
        #expect(try app.store.refusals(app: Self.app, since: 0).isEmpty)
        // Flushed, they are the store's: one row per code and hour, not one per refusal.
        try app.application.flushRefusals()
        let stored = try app.store.refusals(app: Self.app, since: 0)
        #expect(stored.count == 3 && stored.map(\.count).reduce(0, +) == 5, "\(stored)")
        try app.application.flushRefusals()
        #expect(try Self.counts(app, token: viewer, kind: "upload") == expected)

        // Across a restart (the stop flushes what came since the last flush).
        #expect(try Self.unattestedUpload(app, key: key) == 401)
        try app.restart()
        #expect(try Self.counts(app, token: viewer, kind: "upload") == ["assertion_required": 4, "assertion_malformed": 1])

        // 24 hours on, the last 24 hours hold none of them; 48 hours on, the rows are gone.
        app.clock.advance(seconds: 24 * 3600)
        #expect(try Self.counts(app, token: viewer, kind: "upload").isEmpty)
        #expect(try !app.store.refusals(app: Self.app, since: 0).isEmpty)
        app.clock.advance(seconds: 24 * 3600)
        try app.application.flushRefusals()
        #expect(try app.store.refusals(app: Self.app, since: 0).isEmpty)
    }

    @Test func uploadsStoredUnderObserveWithoutAnAssertionAreWhatRequireWouldRefuse() throws {
        let app = try TestApplication()
        let key = try app.addApp(Self.app)
        let admin = try app.addToken(role: "admin", name: "admin")
        // Off: nothing would be refused, nothing is counted.
        #expect(try Self.unattestedUpload(app, key: key) == 202)
        #expect(try Self.counts(app, token: admin, kind: "would_refuse").isEmpty)
        let put = try app.client.request("PUT", "/v1/admin/apps/\(Self.app)/attestation", token: admin,
                                         body: Array(#"{"mode": "observe", "team_id": "ABCDE12345", "bundle_id": "com.example.mail"}"#.utf8))
        #expect(put.status == 200, "\(put.text)")
        for _ in 0..<2 { #expect(try Self.unattestedUpload(app, key: key) == 202) }
        #expect(try Self.counts(app, token: admin, kind: "would_refuse") == ["assertion_required": 2])
        // They were stored, not refused.
        #expect(try Self.counts(app, token: admin, kind: "upload").isEmpty)
    }

    @Test func twoNodesAddTheirCountsToTheSameRows() throws {
        let first = try TestApplication()
        let second = try TestApplication(clock: first.clock, sharing: first)
        let key = try first.addApp(Self.app)
        let admin = try first.addToken(role: "admin", name: "admin")
        try Self.requireAttestation(first, admin: admin)
        for _ in 0..<2 { #expect(try Self.unattestedUpload(first, key: key) == 401) }
        for _ in 0..<3 { #expect(try Self.unattestedUpload(second, key: key) == 401) }
        try first.application.flushRefusals()
        try second.application.flushRefusals()
        let stored = try first.store.refusals(app: Self.app, since: 0)
        #expect(stored.map(\.code) == ["assertion_required"] && stored.first?.count == 5, "\(stored)")
    }

    @Test func anAppThatDoesNotExistGetsNoRowAndAForgedKeyIsNotCounted() throws {
        let app = try TestApplication()
        let key = try app.addApp(Self.app)
        let admin = try app.addToken(role: "admin", name: "admin")
        try Self.requireAttestation(app, admin: admin)
        // A key no app has: refused before anything is counted.
        #expect(try Self.unattestedUpload(app, key: "wdi_" + String(repeating: "x", count: 40)) == 401)
        try app.application.flushRefusals()
        #expect(try app.store.refusals(app: Self.app, since: 0).isEmpty)
        // The store skips an app that does not exist (one deleted between count and flush).
        let hour = app.clock.now / 3_600_000 * 3_600_000
        try app.store.addRefusals([RefusalCount(app: "com.example.ghost", kind: "upload", code: "assertion_required", hour: hour, count: 7),
                                   RefusalCount(app: Self.app, kind: "upload", code: "rate_limited", hour: hour, count: 2)], keepFrom: 0)
        #expect(try app.store.refusals(app: "com.example.ghost", since: 0).isEmpty)
        #expect(try app.store.refusals(app: Self.app, since: 0).map(\.count) == [2])
        #expect(try Self.counts(app, token: admin, kind: "upload") == ["rate_limited": 2])
        _ = key
    }

    @Test func aViewerOfAnotherAppCannotReadThem() throws {
        let app = try TestApplication()
        _ = try app.addApp(Self.app)
        _ = try app.addApp("com.example.notes")
        let other = try app.addToken(role: "viewer", name: "notes viewer", apps: ["com.example.notes"])
        // As every route of an app out of the token's scope: not found.
        #expect(try app.client.request("GET", Self.path, token: other).status == 404)
        #expect(try app.client.request("GET", "/v1/admin/apps/com.example.none/attestation/refusals",
                                       token: try app.addToken(role: "admin", name: "admin")).status == 404)
    }
}
