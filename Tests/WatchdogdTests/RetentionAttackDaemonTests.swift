import Foundation
import Testing
import WatchdogTesting

/// Retention removes what it no longer needs (issue 39, point 5), on SQLite and PostgreSQL: a
/// holder of the ingest key inventing releases and installs leaves rows that outlived their
/// raw data (install origins, hourly counts, every roll-up and mark of unlisted releases: 230
/// → 111 MB after 1,000 requests, none of it going). Past the window, none of them is left;
/// the declared release's figures stay.
@Suite struct RetentionAttackDaemonTests {
    static let app = "com.example.mail"

    /// Rows an attacker's requests made, per table, as SQL both stores read alike.
    static func attackerRows(_ daemon: Daemon) throws -> [String: Int] {
        var rows: [String: Int] = [:]
        for (name, query) in [
            ("fake releases", "SELECT count(*) FROM releases WHERE version LIKE '9.%'"),
            ("their per-install roll-ups", "SELECT count(*) FROM release_installs WHERE version LIKE '9.%'"),
            ("their per-kind roll-ups", "SELECT count(*) FROM release_kinds WHERE version LIKE '9.%'"),
            ("their networks", "SELECT count(*) FROM release_networks WHERE version LIKE '9.%'"),
            ("install origins", "SELECT count(*) FROM install_origins"),
            ("hourly counts", "SELECT count(*) FROM ingest_hourly_counts"),
            ("affected-session marks", "SELECT count(*) FROM session_affected_marks"),
            ("issue marks", "SELECT count(*) FROM session_issue_marks"),
        ] {
            rows[name] = Int(try daemon.sql(query).first?.first??.description ?? "") ?? -1
        }
        return rows
    }

    @Test func pastTheWindowNothingTheAttackerMadeIsLeftAndTheDeclaredReleaseStays() throws {
        let clock = try ClockFile()
        let daemon = try Daemon(extraArguments: ["--retention-days", "1", "--retention-interval", "1"] + clock.arguments, environment: ClockFile.environment)
        let admin = try daemon.addToken(role: "admin")
        let viewer = try daemon.addToken(role: "viewer")
        let fleet = NetworkFleet(daemon: daemon, app: Self.app, key: try daemon.addApp(Self.app, admission: nil), clock: clock)
        #expect(try daemon.runCommand(["releases", "add", Self.app, "14.2.0", "1"]).status == 0)
        for network in 0..<10 {
            try fleet.post("/v1/sessions", from: NetworkFleet.honest(network), ["sessions": [fleet.session(version: "14.2.0", install: "I-\(network)",
                                                                                                       startedAt: fleet.now.addingTimeInterval(-60))]])
        }
        // The attacker: 40 made-up releases from one network, 5 glitching sessions of fresh installs each.
        for version in 0..<40 {
            try fleet.forge(network: 0, version: "9.0.\(version)", prefix: "A\(version)", installs: 5, sessions: 1, glitching: true)
        }
        let before = try Self.attackerRows(daemon)
        #expect(before.values.allSatisfy { $0 > 0 }, "\(before)")
        let releasesBefore = try daemon.client.request("GET", "/v1/apps/\(Self.app)/releases", token: viewer).json["releases"]
        // Two days on: every raw row is past the one-day window.
        try clock.advance(hours: 48, daemon, admin: admin)
        let deadline = Date().addingTimeInterval(60)
        var after = try Self.attackerRows(daemon)
        while after.values.contains(where: { $0 != 0 }), Date() < deadline {
            usleep(200_000)
            after = try Self.attackerRows(daemon)
        }
        #expect(after.values.allSatisfy { $0 == 0 }, "left after retention: \(after)")
        let releasesAfter = try daemon.client.request("GET", "/v1/apps/\(Self.app)/releases", token: viewer).json["releases"]
        #expect(NSArray(array: releasesAfter as? [Any] ?? []) == NSArray(array: releasesBefore as? [Any] ?? []), "the declared release's figures stay")
        #expect((releasesAfter as? [[String: Any]])?.first?["sessions"] as? Int == 10)
    }
}
