import Foundation
import Testing
import WatchdogTesting

/// `attested_sessions` of `GET …/releases` (README, "Attested installs"): of a release's
/// counted sessions, those of installs with an attested key — what the dashboard shows as the
/// attested share. SQLite, or PostgreSQL with `WATCHDOG_TEST_STORE=postgres`.
@Suite struct AttestedShareTests {
    static func releases(_ fleet: AttestedFleet) throws -> [String: [String: Any]] {
        let viewer = try fleet.application.addToken(role: "viewer")
        let answer = try fleet.application.client.request("GET", "/v1/apps/\(AttestedFleet.app)/releases", token: viewer)
        #expect(answer.status == 200, "\(answer.text)")
        let releases = answer.json["releases"] as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: releases.map { ($0["release"] as? String ?? "", $0) })
    }

    @Test func eachReleaseSaysHowManyOfItsSessionsAreOfAttestedInstalls() throws {
        let fleet = try AttestedFleet(mode: "observe")
        try fleet.attestedRelease(version: "14.1.0", installs: 12, affected: 2)
        try fleet.attestedRelease(version: "14.2.0", installs: 7, affected: 0)
        try fleet.forged(version: "14.2.0", installs: 30, affected: 5)
        let releases = try Self.releases(fleet)
        #expect(releases["14.1.0 (1)"]?["attested_sessions"] as? Int == 12 && releases["14.1.0 (1)"]?["sessions"] as? Int == 12, "\(releases)")
        #expect(releases["14.2.0 (1)"]?["attested_sessions"] as? Int == 7 && releases["14.2.0 (1)"]?["sessions"] as? Int == 37, "\(releases)")
        // Turned off, the field says nothing rather than a share of nothing.
        try fleet.setMode("off")
        let off = try Self.releases(fleet)
        #expect(off["14.2.0 (1)"]?["attested_sessions"] is NSNull, "\(off)")
    }
}
