import Foundation
import Testing
import WatchdogServer
import WatchdogTesting
import WatchdogWire

/// Attested installs (docs/security.md, "Attested installs") against every way an attestation or an
/// assertion can be wrong: each refused with its own code, and under `require` none of them
/// stores anything. On SQLite, or PostgreSQL with `WATCHDOG_TEST_STORE=postgres`.
@Suite struct AttestationRefusalTests {
    // MARK: Attestations

    @Test func anAttestedInstallsSignedUploadIsStored() throws {
        let fleet = try AttestedFleet()
        var device = try fleet.attest(install: "I-1")
        let body = AttestedFleet.sessionsBody(install: "I-1", count: 3, started: fleet.application.clock.now - 60_000)
        let response = try fleet.post(body: body, assertion: device.assertionHeader(body: body, appID: AttestedFleet.appID))
        #expect(response.status == 202, "\(response.text)")
        #expect(response.json["accepted"] as? Int == 3)
        #expect(try fleet.storedSessions() == 3)
        #expect(try fleet.application.store.attestedInstalls(app: AttestedFleet.app) == ["I-1"])
    }

    /// Each wrong attestation object, its code; the challenge is used up either way.
    @Test(arguments: [
        ("another app's RP id", "attestation_app_mismatch"),
        ("a tampered authData", "attestation_nonce_mismatch"),
        ("another nonce", "attestation_nonce_mismatch"),
        ("a counter that is not 0", "attestation_counter_not_zero"),
        ("the development AAGUID", "attestation_environment_mismatch"),
    ])
    func aWrongAttestationIsRefusedWithItsCode(fault: String, code: String) throws {
        let fleet = try AttestedFleet()
        let device = AppAttestFixture.DeviceKey()
        let challenge = try fleet.challenge()
        var faults = AppAttestFixture.Faults()
        switch fault {
        case "another app's RP id": faults.appID = "ABCDE12345.com.example.other"
        case "a tampered authData": faults.tamperAuthData = true
        case "another nonce": faults.nonce = [UInt8](repeating: 7, count: 32)
        case "a counter that is not 0": faults.counter = 1
        default: faults.aaguid = Array("appattestdevelop".utf8)
        }
        let object = try fleet.fixture.attestation(key: device, challenge: challenge, appID: AttestedFleet.appID, faults: faults)
        let response = try fleet.postAttestation(install: "I-1", device: device, challenge: challenge, object: object)
        #expect(response.status == 403)
        #expect(response.errorCode == code, "\(fault): \(response.text)")
        #expect(try fleet.application.store.attestedInstalls(app: AttestedFleet.app).isEmpty)
    }

    @Test func aDevelopmentKeyIsAcceptedOnlyWhenTheAppIsSetToDevelopment() throws {
        let fleet = try AttestedFleet(environment: "development")
        _ = try fleet.attest(install: "I-dev", development: true)
        #expect(throws: FleetError.self) { try fleet.attest(install: "I-prod", development: false) }
        #expect(try fleet.application.store.attestedInstalls(app: AttestedFleet.app) == ["I-dev"])
    }

    @Test func aChallengeIsUsedOnceAndExpires() throws {
        let fleet = try AttestedFleet()
        let device = AppAttestFixture.DeviceKey()
        let challenge = try fleet.challenge()
        let object = try fleet.fixture.attestation(key: device, challenge: challenge, appID: AttestedFleet.appID)
        #expect(try fleet.postAttestation(install: "I-1", device: device, challenge: challenge, object: object).status == 201)
        // Replayed: the same challenge again (another key, so only the challenge is wrong).
        let other = AppAttestFixture.DeviceKey()
        let replayed = try fleet.postAttestation(install: "I-2", device: other, challenge: challenge,
                                                 object: try fleet.fixture.attestation(key: other, challenge: challenge, appID: AttestedFleet.appID))
        #expect(replayed.status == 403)
        #expect(replayed.errorCode == "challenge_unknown")
        // Expired: issued, then 5 minutes pass.
        let late = try fleet.challenge()
        fleet.application.clock.advance(seconds: 301)
        let expired = try fleet.postAttestation(install: "I-2", device: other, challenge: late,
                                                object: try fleet.fixture.attestation(key: other, challenge: late, appID: AttestedFleet.appID))
        #expect(expired.status == 403)
        #expect(expired.errorCode == "challenge_expired")
        // Never issued.
        let invented = [UInt8](repeating: 1, count: 32)
        let unknown = try fleet.postAttestation(install: "I-2", device: other, challenge: invented,
                                                object: try fleet.fixture.attestation(key: other, challenge: invented, appID: AttestedFleet.appID))
        #expect(unknown.errorCode == "challenge_unknown")
        #expect(try fleet.application.store.attestedInstalls(app: AttestedFleet.app) == ["I-1"])
    }

    @Test func aChainToAnotherRootIsRefused() throws {
        let fleet = try AttestedFleet()
        let stranger = try AppAttestFixture(now: Date(timeIntervalSince1970: fleet.application.clock.seconds))
        let device = AppAttestFixture.DeviceKey()
        let challenge = try fleet.challenge()
        let response = try fleet.postAttestation(install: "I-1", device: device, challenge: challenge,
                                                 object: try stranger.attestation(key: device, challenge: challenge, appID: AttestedFleet.appID))
        #expect(response.status == 403)
        #expect(response.errorCode == "attestation_untrusted_chain")
        #expect(try fleet.application.store.attestedInstalls(app: AttestedFleet.app).isEmpty)
    }

    @Test func theProductionServerTrustsOnlyApplesRoot() throws {
        // Without a test CA the application pins Apple's root: the test CA's chain is refused.
        let clock = TestClock()
        let fixture = try AppAttestFixture(now: Date(timeIntervalSince1970: clock.seconds))
        let application = try TestApplication(clock: clock)
        let key = try application.addApp(AttestedFleet.app)
        let admin = try application.addToken(role: "admin")
        #expect(try application.client.request("PUT", "/v1/admin/apps/\(AttestedFleet.app)/attestation", token: admin,
                                                body: Array(#"{"mode":"require","team_id":"ABCDE12345","bundle_id":"com.example.mail"}"#.utf8)).status == 200)
        let challenge = Array(Data(base64Encoded: try application.client.request("POST", "/v1/attest/challenge", token: key).json["challenge"] as? String ?? "")!)
        let device = AppAttestFixture.DeviceKey()
        let response = try application.client.postJSON("/v1/attest", token: key, json: [
            "install_id": "I-1", "key_id": device.keyIDBase64, "challenge": Data(challenge).base64EncodedString(),
            "attestation": Data(try fixture.attestation(key: device, challenge: challenge, appID: AttestedFleet.appID)).base64EncodedString(),
        ])
        #expect(response.errorCode == "attestation_untrusted_chain")
    }

    @Test func malformedCBORIsRefused() throws {
        let fleet = try AttestedFleet()
        let device = AppAttestFixture.DeviceKey()
        for object: [UInt8] in [[0xa1, 0x63, 0x66, 0x6d], [0xbf, 0xff], [0xa1, 0x63, 0x66, 0x6d, 0x74, 0xc0], [0x5a, 0xff, 0xff, 0xff, 0xff]] {
            let response = try fleet.postAttestation(install: "I-1", device: device, challenge: try fleet.challenge(), object: object)
            #expect(response.status == 400)
            #expect(response.errorCode == "attestation_malformed", "\(object): \(response.text)")
        }
        let body = AttestedFleet.sessionsBody(install: "I-1", started: fleet.application.clock.now)
        let response = try fleet.post(body: body, assertion: device.keyIDBase64 + "." + Data([0xa2, 0x69]).base64EncodedString())
        #expect(response.errorCode == "assertion_unknown_key")
        let attested = try fleet.attest(install: "I-1")
        let malformed = try fleet.post(body: body, assertion: attested.keyIDBase64 + "." + Data([0xa2, 0x69]).base64EncodedString())
        #expect(malformed.status == 400)
        #expect(malformed.errorCode == "assertion_malformed")
        #expect(try fleet.post(body: body, assertion: "not base64!").errorCode == "assertion_malformed")
        #expect(try fleet.storedSessions() == 0)
    }

    @Test func aKeyIsAttestedOnceAndChallengesAreBoundedPerNetwork() throws {
        let fleet = try AttestedFleet()
        let device = try fleet.attest(install: "I-1")
        let challenge = try fleet.challenge()
        let again = try fleet.postAttestation(install: "I-1", device: device, challenge: challenge,
                                              object: try fleet.fixture.attestation(key: device, challenge: challenge, appID: AttestedFleet.appID))
        #expect(again.status == 409)
        #expect(again.errorCode == "key_already_attested")
        for host in 7..<11 { for _ in 0..<4 { _ = try fleet.challenge(from: "198.51.100.\(host)") } }
        let refused = try fleet.application.client(from: "198.51.100.9").request("POST", "/v1/attest/challenge", token: fleet.key)
        #expect(refused.status == 429)
        #expect(refused.errorCode == "too_many_challenges")
        #expect(try fleet.challenge(from: "203.0.113.1").count == 32)
    }

    @Test func theIngestRateLimitsApplyToChallengesAndAttestations() throws {
        let fleet = try AttestedFleet { settings in
            settings.ingestRatePerAddress = 1
            settings.ingestBurstPerAddress = 2
        }
        _ = try fleet.challenge(from: "198.51.100.7")
        _ = try fleet.challenge(from: "198.51.100.7")
        let limited = try fleet.application.client(from: "198.51.100.7").request("POST", "/v1/attest/challenge", token: fleet.key)
        #expect(limited.status == 429)
        #expect(limited.errorCode == "rate_limited")
        let attest = try fleet.application.client(from: "198.51.100.7").postJSON("/v1/attest", token: fleet.key, json: [:])
        #expect(attest.errorCode == "rate_limited")
    }

    // MARK: Assertions

    @Test func underRequireEveryWrongAssertionIsRefusedAndNothingIsStored() throws {
        let fleet = try AttestedFleet()
        var device = try fleet.attest(install: "I-1")
        let started = fleet.application.clock.now - 60_000
        let body = AttestedFleet.sessionsBody(install: "I-1", started: started)

        let missing = try fleet.post(body: body, assertion: nil)
        #expect(missing.status == 401)
        #expect(missing.errorCode == "assertion_required")

        let otherBody = AttestedFleet.sessionsBody(install: "I-1", count: 2, started: started)
        let overOther = try fleet.post(body: body, assertion: device.assertionHeader(body: otherBody, appID: AttestedFleet.appID))
        #expect(overOther.errorCode == "assertion_invalid_signature")

        let tampered = device.keyIDBase64 + "." + Data(device.assertion(body: body, appID: AttestedFleet.appID, counter: 50) { $0[$0.count - 1] ^= 1 }).base64EncodedString()
        #expect(try fleet.post(body: body, assertion: tampered).errorCode == "assertion_invalid_signature")

        let otherApp = try fleet.post(body: body, assertion: device.assertionHeader(body: body, appID: "ABCDE12345.com.example.other"))
        #expect(otherApp.errorCode == "assertion_app_mismatch")

        let stranger = AppAttestFixture.DeviceKey()
        var unknown = stranger
        #expect(try fleet.post(body: body, assertion: unknown.assertionHeader(body: body, appID: AttestedFleet.appID)).errorCode == "assertion_unknown_key")

        let otherInstall = AttestedFleet.sessionsBody(install: "I-2", started: started)
        let mismatch = try fleet.post(body: otherInstall, assertion: device.assertionHeader(body: otherInstall, appID: AttestedFleet.appID))
        #expect(mismatch.status == 202)
        #expect(((mismatch.json["rejected"] as? [[String: Any]])?.first?["error"] as? [String: Any])?["code"] as? String == "assertion_install_mismatch")
        #expect(try fleet.storedSessions() == 0)

        // The first good one is stored; the same assertion again, or an older counter, is not.
        let good = device.assertionHeader(body: body, appID: AttestedFleet.appID)
        #expect(try fleet.post(body: body, assertion: good).status == 202)
        let replayed = try fleet.post(body: body, assertion: good)
        #expect(replayed.status == 401)
        #expect(replayed.errorCode == "assertion_counter_replayed")
        let older = try fleet.post(body: body, assertion: device.assertionHeader(body: body, appID: AttestedFleet.appID, counter: 2))
        #expect(older.errorCode == "assertion_counter_replayed")
        #expect(try fleet.storedSessions() == 1)
        // Found in the store's transaction, and counted with the other refusals of the last 24 hours.
        let refusals = try fleet.application.client.request("GET", "/v1/admin/apps/\(AttestedFleet.app)/attestation/refusals", token: fleet.admin)
        let replays = (refusals.json["refusals"] as? [[String: Any]] ?? []).first { $0["kind"] as? String == "upload" && $0["code"] as? String == "assertion_counter_replayed" }
        #expect(replays?["count"] as? Int == 2, "\(refusals.text)")
    }

    /// The counter moves on in the store's commit even when no item is left to store: the
    /// assertion is spent all the same.
    @Test func aSignedUploadWithNothingToStoreStillSpendsItsAssertion() throws {
        let fleet = try AttestedFleet()
        var device = try fleet.attest(install: "I-1")
        let body = AttestedFleet.sessionsBody(install: "I-2", started: fleet.application.clock.now - 60_000)
        let header = device.assertionHeader(body: body, appID: AttestedFleet.appID)
        let first = try fleet.post(body: body, assertion: header)
        #expect(first.status == 202 && first.json["accepted"] as? Int == 0, "\(first.text)")
        let replayed = try fleet.post(body: body, assertion: header)
        #expect(replayed.status == 401)
        #expect(replayed.errorCode == "assertion_counter_replayed")
        #expect(try fleet.application.store.attestedKey(app: AttestedFleet.app, keyID: device.keyID)?.counter == 1)
    }

    @Test func reportsNeedTheirAssertionToo() throws {
        let fleet = try AttestedFleet()
        var device = try fleet.attest(install: "I-1")
        var report = try Fixtures.freshReport()
        report["install_id"] = "I-1"
        let body = Array(try JSONSerialization.data(withJSONObject: ["reports": [report]]))
        #expect(try fleet.post("/v1/reports", body: body, assertion: nil).errorCode == "assertion_required")
        let signed = try fleet.post("/v1/reports", body: body, assertion: device.assertionHeader(body: body, appID: AttestedFleet.appID))
        #expect(signed.status == 202)
        #expect(signed.json["accepted"] as? Int == 1)
    }

    @Test func underObserveUnattestedUploadsAreStoredButNotInAnAttestedInstallsName() throws {
        let fleet = try AttestedFleet(mode: "observe")
        var device = try fleet.attest(install: "I-1")
        let started = fleet.application.clock.now - 60_000
        #expect(try fleet.post(body: AttestedFleet.sessionsBody(install: "I-other", started: started), assertion: nil).json["accepted"] as? Int == 1)
        // An unsigned upload in the attested install's name is refused item by item.
        let impostor = try fleet.post(body: AttestedFleet.sessionsBody(install: "I-1", started: started), assertion: nil)
        #expect(((impostor.json["rejected"] as? [[String: Any]])?.first?["error"] as? [String: Any])?["code"] as? String == "assertion_required")
        let body = AttestedFleet.sessionsBody(install: "I-1", started: started)
        #expect(try fleet.post(body: body, assertion: device.assertionHeader(body: body, appID: AttestedFleet.appID)).json["accepted"] as? Int == 1)
        // A wrong assertion is refused under observe too.
        #expect(try fleet.post(body: body, assertion: device.assertionHeader(body: body, appID: AttestedFleet.appID, counter: 1)).status == 401)
        #expect(try fleet.storedSessions() == 2)
    }

    @Test func attestationIsOffUntilAnAdminTurnsItOn() throws {
        let fleet = try AttestedFleet(mode: "off")
        let challenge = try fleet.application.client.request("POST", "/v1/attest/challenge", token: fleet.key)
        #expect(challenge.status == 409)
        #expect(challenge.errorCode == "attestation_off")
        // Off: an assertion header, even a wrong one, is ignored.
        let body = AttestedFleet.sessionsBody(install: "I-1", started: fleet.application.clock.now - 60_000)
        #expect(try fleet.post(body: body, assertion: "garbage").status == 202)
        let settings = try fleet.application.client.request("GET", "/v1/admin/apps/\(AttestedFleet.app)/attestation", token: fleet.admin).json
        #expect(settings["mode"] as? String == "off")
        #expect(settings["team_id"] as? String == AttestedFleet.teamID)
        for bad in [#"{"mode":"always"}"#, #"{"mode":"require","team_id":"abc","bundle_id":"com.example.mail"}"#, #"{"mode":"require"}"#,
                    #"{"mode":"observe","team_id":"ABCDE12345","bundle_id":"com.example.mail","color":"red"}"#] {
            let response = try fleet.application.client.request("PUT", "/v1/admin/apps/\(AttestedFleet.app)/attestation", token: fleet.admin, body: Array(bad.utf8))
            #expect(response.status == 400, "\(bad)")
            #expect(response.errorCode == "invalid_field", "\(bad): \(response.text)")
        }
    }
}
