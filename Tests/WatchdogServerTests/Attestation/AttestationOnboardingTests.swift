import Foundation
import Testing
import WatchdogServer
import WatchdogTesting
import WatchdogWire

/// What issue 40 asked of the server for App Attest as Apple describes it: both environments
/// accepted per app with each key keeping its own, an install's retried upload of an attestation
/// it already holds answered `key_already_attested`, and `attest_percent` in the remote config.
/// On SQLite, or PostgreSQL with `WATCHDOG_TEST_STORE=postgres`.
@Suite struct AttestationOnboardingTests {
    /// Testers run Xcode-installed and TestFlight builds of one app: with `both`, each attests,
    /// and the store keeps the environment its key's AAGUID names.
    @Test func withBothEnvironmentsAnXcodeAndATestFlightBuildAttestAndEachKeyKeepsItsOwn() throws {
        let fleet = try AttestedFleet(environment: "both")
        let xcode = try fleet.attest(install: "I-xcode", development: true)
        let testFlight = try fleet.attest(install: "I-testflight", development: false)
        #expect(try fleet.application.store.attestedInstalls(app: AttestedFleet.app) == ["I-testflight", "I-xcode"])
        #expect(try fleet.application.store.attestedKey(app: AttestedFleet.app, keyID: xcode.keyID)?.environment == "development")
        #expect(try fleet.application.store.attestedKey(app: AttestedFleet.app, keyID: testFlight.keyID)?.environment == "production")
        let settings = try fleet.application.client.request("GET", "/v1/admin/apps/\(AttestedFleet.app)/attestation", token: fleet.admin)
        #expect(settings.json["environment"] as? String == "both")
    }

    @Test func oneEnvironmentStillRefusesTheOthersKeysNamingWhatItAccepts() throws {
        let fleet = try AttestedFleet(environment: "production")
        let device = AppAttestFixture.DeviceKey()
        let challenge = try fleet.challenge()
        let response = try fleet.postAttestation(install: "I-xcode", device: device, challenge: challenge,
                                                 object: try fleet.fixture.attestation(key: device, challenge: challenge, appID: AttestedFleet.appID, development: true))
        #expect(response.status == 403 && response.errorCode == "attestation_environment_mismatch")
        #expect(response.text.contains("production"))
    }

    /// The first upload was stored but its answer lost: the install sends the same attestation
    /// again (its challenge now used) and hears the key is already its own. Another install
    /// sending that attestation is refused as before.
    @Test func aRetriedUploadOfAnAttestationTheInstallHoldsIsAnsweredAlreadyAttested() throws {
        let fleet = try AttestedFleet()
        let device = AppAttestFixture.DeviceKey()
        let challenge = try fleet.challenge()
        let object = try fleet.fixture.attestation(key: device, challenge: challenge, appID: AttestedFleet.appID)
        #expect(try fleet.postAttestation(install: "I-1", device: device, challenge: challenge, object: object).status == 201)
        let again = try fleet.postAttestation(install: "I-1", device: device, challenge: challenge, object: object)
        #expect(again.status == 409 && again.errorCode == "key_already_attested", "\(again.text)")
        let stranger = try fleet.postAttestation(install: "I-2", device: device, challenge: challenge, object: object)
        #expect(stranger.errorCode != "key_already_attested" && stranger.status != 201, "\(stranger.text)")
        #expect(try fleet.application.store.attestedInstalls(app: AttestedFleet.app) == ["I-1"])
    }

    /// `attest_percent` (0–100, default 100): a config key like the others, in the effective
    /// config, in rules, and refused out of range.
    @Test func attestPercentIsARemoteConfigKeyFrom0To100DefaultingTo100() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let admin = try app.addToken(role: "admin")
        let path = "/v1/config?app=com.example.mail&version=14.2.0&build=1&install_id=I-1"
        #expect(try app.client.request("GET", path, token: key).json["attest_percent"] as? Double == 100)
        let patch = try app.client.request("PATCH", "/v1/admin/apps/com.example.mail/config", token: admin, body: Array(#"{"attest_percent": 25}"#.utf8))
        #expect(patch.status == 200, "\(patch.text)")
        #expect(try app.client.request("GET", path, token: key).json["attest_percent"] as? Double == 25)
        let refused = try app.client.request("PATCH", "/v1/admin/apps/com.example.mail/config", token: admin, body: Array(#"{"attest_percent": 150}"#.utf8))
        #expect(refused.status == 400 && refused.text.contains("attest_percent must be a number from 0 to 100"), "\(refused.text)")
    }
}
