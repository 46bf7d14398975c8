import Foundation
import Testing
import WatchdogTesting

/// `attested_sessions` of `GET …/releases` (docs/security.md, "Attested installs"): of a release's
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

    /// The Require dialog's figures: the attested share of each listed release's session starts
    /// of the last 24 hours (`sessions_by_release` of `…/attestation/refusals`), most first.
    @Test func theRequireDialogGetsEachReleasesAttestedShareOfTheLast24Hours() throws {
        let fleet = try AttestedFleet(mode: "observe")
        try fleet.attestedRelease(version: "14.1.0", installs: 12, affected: 0)
        try fleet.attestedRelease(version: "14.2.0", installs: 7, affected: 0)
        try fleet.forged(version: "14.2.0", installs: 30, affected: 0)
        let admin = try fleet.application.addToken(role: "admin")
        func lastDay() throws -> [[String: Any]] {
            let answer = try fleet.application.client.request("GET", "/v1/admin/apps/\(AttestedFleet.app)/attestation/refusals", token: admin)
            #expect(answer.status == 200, "\(answer.text)")
            return answer.json["sessions_by_release"] as? [[String: Any]] ?? []
        }
        #expect(try lastDay().map { [$0["release"] as? String, ($0["sessions"] as? Int).map(String.init), ($0["attested_sessions"] as? Int).map(String.init)] }
                == [["14.2.0 (1)", "37", "7"], ["14.1.0 (1)", "12", "12"]])
        // A day later, those sessions are out of the 24 hours (the release's totals keep them).
        fleet.application.clock.advance(milliseconds: 25 * 3_600_000)
        #expect(try lastDay().isEmpty)
        #expect(try Self.releases(fleet)["14.2.0 (1)"]?["sessions"] as? Int == 37)
    }
}

/// Issue 39, point 4: a session counts as attested only when it carries the assertion of the
/// key that first attested its install — history posted before, or by another key, does not.
@Suite struct AttestedHistoryTests {
    /// `count` unattested session starts of `install` (stored under `observe`: the install has no key yet).
    static func unattested(_ fleet: AttestedFleet, install: String, count: Int) throws {
        let body = AttestedFleet.sessionsBody(install: install, count: count, started: fleet.application.clock.now - 60_000)
        let answer = try fleet.post(body: body, assertion: nil)
        #expect(answer.status == 202 && answer.json["accepted"] as? Int == count, "\(answer.text)")
    }

    static func signed(_ fleet: AttestedFleet, install: String, count: Int, device: inout AppAttestFixture.DeviceKey) throws {
        let body = AttestedFleet.sessionsBody(install: install, count: count, started: fleet.application.clock.now - 60_000)
        let answer = try fleet.post(body: body, assertion: device.assertionHeader(body: body, appID: AttestedFleet.appID))
        #expect(answer.status == 202 && answer.json["accepted"] as? Int == count, "\(answer.text)")
    }

    static func attestedSessions(_ fleet: AttestedFleet) throws -> (attested: Int?, sessions: Int?) {
        let release = try AttestedShareTests.releases(fleet)["14.2.0 (31245)"]
        return (release?["attested_sessions"] as? Int, release?["sessions"] as? Int)
    }

    @Test func unattestedHistoryOfAnInstallStaysUnattestedWhenAKeyClaimsIt() throws {
        let fleet = try AttestedFleet(mode: "observe")
        // Twenty sessions of I-1 with no key; then a key claims I-1 and signs one more.
        try Self.unattested(fleet, install: "I-1", count: 20)
        var device = try fleet.attest(install: "I-1")
        try Self.signed(fleet, install: "I-1", count: 1, device: &device)
        let shares = try Self.attestedSessions(fleet)
        #expect(shares.attested == 1 && shares.sessions == 21, "before: 21 of 21 attested; now \(String(describing: shares))")
        // The attested comparison sees I-1's one signed session, not its history.
        try fleet.attestedRelease(version: "14.1.0", installs: 2, affected: 0)
        let viewer = try fleet.application.addToken(role: "viewer")
        let compare = try fleet.application.client.request("GET", "/v1/apps/\(AttestedFleet.app)/compare?base=14.1.0&target=14.2.0&installs=attested", token: viewer)
        #expect(compare.status == 200, "\(compare.text)")
        #expect(((compare.json["overall"] as? [String: Any])?["target"] as? [String: Any])?["sessions"] as? Int == 1, "\(compare.json["overall"] ?? "")")
    }

    @Test func aSecondKeyForAnAttestedInstallIsStoredButItsSessionsAreNotAttested() throws {
        let fleet = try AttestedFleet(mode: "observe")
        var first = try fleet.attest(install: "I-1")
        try Self.signed(fleet, install: "I-1", count: 2, device: &first)
        // Another genuine device claims I-1 (a restore to another device looks the same): its
        // key is kept, so its uploads are not refused, but the install is the first key's.
        var second = AppAttestFixture.DeviceKey()
        let challenge = try fleet.challenge()
        let attested = try fleet.postAttestation(install: "I-1", device: second, challenge: challenge,
                                                 object: try fleet.fixture.attestation(key: second, challenge: challenge, appID: AttestedFleet.appID))
        #expect(attested.status == 201 && attested.json["owner"] as? Bool == false, "\(attested.text)")
        try Self.signed(fleet, install: "I-1", count: 5, device: &second)
        var shares = try Self.attestedSessions(fleet)
        #expect(shares.attested == 2 && shares.sessions == 7, "\(shares)")
        try Self.signed(fleet, install: "I-1", count: 1, device: &first)
        shares = try Self.attestedSessions(fleet)
        #expect(shares.attested == 3 && shares.sessions == 8, "\(shares)")
    }

    @Test func oneAddressHoldsAFewOfItsNetworksChallengesAndCannotLockItsNeighboursOut() throws {
        let fleet = try AttestedFleet()
        var issued = 0
        while issued < 20, (try? fleet.challenge(from: "198.51.100.7")) != nil { issued += 1 }
        #expect(issued == 4, "an address holds 4 unused challenges")
        let refused = try fleet.application.client(from: "198.51.100.7").request("POST", "/v1/attest/challenge", token: fleet.key)
        #expect(refused.status == 429 && refused.errorCode == "too_many_challenges", "\(refused.text)")
        // Its neighbours on the /24 still get theirs, up to the network's 16.
        for host in 8..<11 { for _ in 0..<4 { _ = try fleet.challenge(from: "198.51.100.\(host)") } }
        #expect(try fleet.application.client(from: "198.51.100.99").request("POST", "/v1/attest/challenge", token: fleet.key).status == 429,
                "the network's 16")
        #expect(try fleet.challenge(from: "203.0.113.1").count == 32)
    }
}
