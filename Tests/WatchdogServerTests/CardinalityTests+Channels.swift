import Foundation
import GRDB
import PostgresClient
import Testing
@testable import WatchdogServer
import WatchdogStore
import WatchdogTesting

/// `release.channel` is capped per release like screens: past `channelsPerRelease` a report's
/// channel is stored and rolled up as `(other)`, its body keeps what the client sent, and the
/// remote config (which matches the channel a client asks with) does not see the cap.
extension CardinalityTests {
    /// A report of release 14.2.0 (or `version`) on `channel`.
    static func report(channel: String, version: String = "14.2.0", build: String = "31245") throws -> [String: Any] {
        var report = try Self.report("x-glitch", version: version, build: build)
        report["release"] = ["version": version, "build": build, "channel": channel]
        return report
    }

    /// Reports per stored channel column of a release (SQLite through the `report_texts` view,
    /// PostgreSQL its text column).
    static func storedChannels(_ app: TestApplication, version: String) throws -> [String: Int] {
        let rows: [(String, Int)]
        if let url = try TestStore.postgresURL(directory: app.dataDirectory) {
            rows = try PostgresConnection(url: url).query("SELECT channel, count(*) FROM reports WHERE version = $1 GROUP BY channel", [version])
                .map { ($0.text(0), Int($0.integer(1))) }
        } else {
            rows = try DatabaseQueue(path: try app.sqlite.path).read { db in
                try Row.fetchAll(db, sql: "SELECT channel, count(*) FROM report_texts WHERE version = ? GROUP BY channel", arguments: [version]).map { ($0[0], $0[1]) }
            }
        }
        return Dictionary(uniqueKeysWithValues: rows)
    }

    /// Reports per channel in a release's roll-up (`release_breakdown`).
    static func rolledUpChannels(_ app: TestApplication, version: String, build: String = "31245") throws -> [String: Int] {
        let detail = try #require(try app.store.releaseDetail(app: "com.example.mail", release: ReleaseID(version: version, build: build)))
        return Dictionary(detail.breakdown.filter { $0.dimension == "channel" }.map { ($0.value, $0.reports) }, uniquingKeysWith: +)
    }

    @Test func channelsPastAReleasesCapAreStoredAndRolledUpAsOtherAndTheCapHoldsAfterARestart() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let cap = 16 // the cap README's "Cardinality" documents
        let channels = (0..<(cap + 4)).map { "ch-\($0)" }
        try VerdictTests.post(app, key: key, try channels.map { try Self.report(channel: $0) } + [try Self.report(channel: "ch-0")])
        // Another release has a cap of its own.
        try VerdictTests.post(app, key: key, try (0..<3).map { try Self.report(channel: "other-release-\($0)", version: "14.1.0", build: "1") })

        var expected = Dictionary(uniqueKeysWithValues: channels[..<cap].map { ($0, 1) })
        expected["ch-0"] = 2
        expected["(other)"] = 4
        #expect(try Self.rolledUpChannels(app, version: "14.2.0") == expected)
        #expect(try Self.storedChannels(app, version: "14.2.0") == expected)
        #expect(try Self.rolledUpChannels(app, version: "14.1.0", build: "1").count == 3, "14.1.0 is not folded by 14.2.0's cap")
        // The bodies keep what the clients sent.
        let bodies = try app.storedReports().map(\.body)
        for channel in channels[cap...] { #expect(bodies.contains { $0.contains(#""channel":"\#(channel)""#) }, "\(channel)'s body") }

        // A restarted server reads the admitted channels back: a new one is folded, a known one is not.
        try app.restart()
        try VerdictTests.post(app, key: key, [try Self.report(channel: "ch-new"), try Self.report(channel: "ch-3")])
        expected["(other)"] = 5
        expected["ch-3"] = 2
        #expect(try Self.rolledUpChannels(app, version: "14.2.0") == expected)
        #expect(try Self.storedChannels(app, version: "14.2.0") == expected)

        // The remote config matches the channel a client asks with, past the cap too; an
        // install's channel (of its session starts, what rollouts match) is not folded.
        let admin = try app.addToken(role: "admin")
        #expect(try ConfigRulesTests.patch(app, admin, #"{"rules": [{"id": "late", "match": {"channels": ["ch-19"]}, "set": {"auto_fix": true}}]}"#).status == 200)
        let config = try app.client.request("GET", "/v1/config?app=com.example.mail&version=14.2.0&build=31245&channel=ch-19&install_id=I-19", token: key)
        #expect(config.json["auto_fix"] as? Bool == true, "\(config.text)")
        var session = Fixtures.session()
        session["install_id"] = "I-19"
        session["release"] = ["version": "14.2.0", "build": "31245", "channel": "ch-19"]
        #expect(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": [session]]).status == 202)
        #expect(try app.store.recentInstalls(app: "com.example.mail", since: 0, limit: 10).map(\.channel) == ["ch-19"])
    }
}
