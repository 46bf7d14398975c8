import Foundation
import Locking
import Testing
import TestSupport
import WatchdogKit
import WatchdogWire

/// App Attest as Apple describes it ("Establishing your app's integrity"): an attestation is
/// kept and only its upload retried, `serverUnavailable` is retried with the same key and the
/// same client-data hash, a key of the other environment is replaced, extensions never try, and
/// installs are onboarded by `attest_percent`. Apple's service and watchdogd's two attestation
/// endpoints are scripted here (`KitAttestationTests` runs the attester against the real server).
@Suite struct AppAttestTests {
    /// DeviceCheck's App Attest, scripted: each `attestKey` answers the next outcome (then succeeds).
    final class ScriptedService: AppAttestService, Sendable {
        struct Unavailable: Error {}
        struct Invalid: Error {}

        private let log = Locked<(generated: Int, attested: [(key: String, challenge: Data)], outcomes: [(any Error)?])>((0, [], []))

        init(attestOutcomes: [(any Error)?] = []) {
            log.withLock { $0.outcomes = attestOutcomes }
        }

        var generated: Int { log.withLock { $0.generated } }
        var attested: [(key: String, challenge: Data)] { log.withLock { $0.attested } }
        var isSupported: Bool { true }

        func generateKey() async throws -> String {
            log.withLock { log in
                log.generated += 1
                return "key-\(log.generated)"
            }
        }

        func attestKey(_ keyID: String, challenge: Data) async throws -> Data {
            let outcome: (any Error)? = log.withLock { log in
                log.attested.append((keyID, challenge))
                return log.outcomes.isEmpty ? nil : log.outcomes.removeFirst()
            }
            if let outcome { throw outcome }
            return Data("attestation of \(keyID) over \(challenge.base64EncodedString())".utf8)
        }

        func generateAssertion(_ keyID: String, body: Data) async throws -> Data { Data("assertion".utf8) }

        func classify(_ error: any Error) -> AppAttestFailure {
            error is Unavailable ? .serverUnavailable : error is Invalid ? .invalidKey : .other
        }
    }

    /// watchdogd's `POST /v1/attest/challenge` (a new challenge each time, good for 5 minutes of
    /// `now`) and `POST /v1/attest` (the next scripted status and error code, then 201).
    final class AttestServer: HTTPTransport, Sendable {
        private let log = Locked<(challenges: Int, uploads: [Data], answers: [(Int, String?)], now: Date)>((0, [], [], Date(timeIntervalSince1970: 1_795_000_000)))

        init(attestAnswers: [(Int, String?)] = []) {
            log.withLock { $0.answers = attestAnswers }
        }

        var challenges: Int { log.withLock { $0.challenges } }
        var uploads: [Data] { log.withLock { $0.uploads } }
        var now: Date { log.withLock { $0.now } }
        func advance(_ seconds: Double) { log.withLock { $0.now += seconds } }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            if request.url.path.hasSuffix("/challenge") {
                let (number, expires) = log.withLock { log in
                    log.challenges += 1
                    return (log.challenges, Int64((log.now.timeIntervalSince1970 + 300) * 1000))
                }
                let challenge = Data("challenge-\(number)".utf8).base64EncodedString()
                return TransportResponse(status: 201, headers: [:], body: Data(#"{"challenge":"\#(challenge)","expires_at":\#(expires)}"#.utf8))
            }
            let (status, code) = log.withLock { log -> (Int, String?) in
                log.uploads.append(request.body ?? Data())
                return log.answers.isEmpty ? (201, nil) : log.answers.removeFirst()
            }
            let body = code.map { #"{"error":{"code":"\#($0)","message":"\#($0)"}}"# } ?? #"{"key_id":"k","install_id":"I-1","environment":"production"}"#
            return TransportResponse(status: status, headers: [:], body: Data(body.utf8))
        }
    }

    static func attester(_ service: ScriptedService, _ server: AttestServer, clock: ManualClock, stateFile: URL, environment: String? = "production") -> AppAttester {
        AppAttester(service: service, transport: server, endpoint: URL(string: "https://watchdog.example.com")!, ingestKey: "wdi_test", installID: "I-1",
                    stateFile: stateFile, environment: environment, clock: { clock.now }, wallClock: { server.now }, logger: TaggedLogger(tag: "keyboard"),
                    retryInterval: 30)
    }

    static func stateFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("attest-\(UUID()).json")
    }

    /// Apple attests a key once: when the attestation's upload fails, the attestation is kept —
    /// across a relaunch too — and only the upload is tried again.
    @Test func anAttestationWhoseUploadFailedIsKeptAndOnlyItsUploadRetried() async throws {
        let service = ScriptedService()
        let server = AttestServer(attestAnswers: [(503, nil)])
        let clock = ManualClock(100)
        let file = Self.stateFile()
        #expect(await Self.attester(service, server, clock: clock, stateFile: file).assertionHeader(for: Data("{}".utf8)) == nil, "the upload failed")
        clock.advance(31)
        let relaunched = Self.attester(service, server, clock: clock, stateFile: file)
        #expect(await relaunched.assertionHeader(for: Data("{}".utf8)) == "key-1.\(Data("assertion".utf8).base64EncodedString())")
        #expect(relaunched.isAttested)
        #expect(service.generated == 1 && service.attested.count == 1, "one key, attested by Apple once")
        #expect(server.challenges == 1)
        let uploads = try server.uploads.map { try #require(try JSONSerialization.jsonObject(with: $0) as? [String: String]) }
        #expect(uploads.count == 2 && uploads[0] == uploads[1], "the same attestation uploaded again")
        #expect(uploads.first?["attestation"].flatMap { Data(base64Encoded: $0) }.map { String(decoding: $0, as: UTF8.self) }?.hasPrefix("attestation of key-1") == true)
    }

    /// The first upload arrived but its answer did not: the server says the install holds the
    /// key already, and that is as good as 201.
    @Test func aLostAnswerIsAnsweredAlreadyAttestedAndCountsAsAttested() async throws {
        let service = ScriptedService()
        let server = AttestServer(attestAnswers: [(409, "key_already_attested")])
        let attester = Self.attester(service, server, clock: ManualClock(100), stateFile: Self.stateFile())
        #expect(await attester.assertionHeader(for: Data()) != nil)
        #expect(attester.isAttested && service.attested.count == 1)
    }

    /// Apple: retry `serverUnavailable` with the same key and the same client-data hash.
    @Test func serverUnavailableIsRetriedWithTheSameKeyAndTheSameChallenge() async throws {
        let service = ScriptedService(attestOutcomes: [ScriptedService.Unavailable()])
        let server = AttestServer()
        let clock = ManualClock(100)
        let attester = Self.attester(service, server, clock: clock, stateFile: Self.stateFile())
        #expect(await attester.assertionHeader(for: Data()) == nil)
        clock.advance(31)
        #expect(await attester.assertionHeader(for: Data()) != nil)
        let calls = service.attested
        #expect(calls.count == 2 && calls[0].key == calls[1].key && calls[0].challenge == calls[1].challenge)
        #expect(service.generated == 1 && server.challenges == 1)
    }

    /// Past the challenge's life the server would refuse it: a new challenge, the same key.
    @Test func aChallengeThatExpiredMeanwhileIsReplacedButTheKeyIsKept() async throws {
        let service = ScriptedService(attestOutcomes: [ScriptedService.Unavailable()])
        let server = AttestServer()
        let clock = ManualClock(100)
        let attester = Self.attester(service, server, clock: clock, stateFile: Self.stateFile())
        _ = await attester.assertionHeader(for: Data())
        clock.advance(600)
        server.advance(600)
        #expect(await attester.assertionHeader(for: Data()) != nil)
        #expect(service.generated == 1 && server.challenges == 2)
        #expect(service.attested.map(\.key) == ["key-1", "key-1"])
    }

    /// An attestation whose challenge the server no longer holds cannot be uploaded, and its key
    /// cannot be attested again: a new key, at once.
    @Test func anAttestationWhoseChallengeTheServerLostMakesANewKey() async throws {
        let service = ScriptedService()
        let server = AttestServer(attestAnswers: [(403, "challenge_expired")])
        let attester = Self.attester(service, server, clock: ManualClock(100), stateFile: Self.stateFile())
        #expect(await attester.assertionHeader(for: Data()) == nil)
        #expect(await attester.assertionHeader(for: Data()) != nil, "no wait: the old key is useless")
        #expect(service.generated == 2 && service.attested.map(\.key) == ["key-1", "key-2"])
    }

    /// A tester who had the Xcode build installs the TestFlight build: the key made in the
    /// development environment is not reused in production.
    @Test func aKeyOfTheOtherEnvironmentIsReplacedAndOneOfTheSameKept() async throws {
        for (saved, expectedKeys) in [("development", 1), ("production", 0)] {
            let file = Self.stateFile()
            try Data(#"{"key_id":"old-key","attested":true,"environment":"\#(saved)"}"#.utf8).write(to: file)
            let service = ScriptedService()
            let attester = Self.attester(service, AttestServer(), clock: ManualClock(100), stateFile: file, environment: "production")
            let header = await attester.assertionHeader(for: Data())
            #expect(service.generated == expectedKeys, "saved by a \(saved) build")
            #expect(header?.hasPrefix(expectedKeys == 1 ? "key-1." : "old-key.") == true)
        }
    }

    @Test func installsAreOnboardedByAStablePercentOfTheirIds() {
        let ids = (0..<10_000).map { "install-\($0)" }
        let quarter = Set(ids.filter { CohortBucket.includes(key: "attest_percent", installID: $0, percent: 25) })
        let half = Set(ids.filter { CohortBucket.includes(key: "attest_percent", installID: $0, percent: 50) })
        #expect((2_300...2_700).contains(quarter.count), "\(quarter.count)")
        #expect(quarter.isSubset(of: half), "growing the share keeps the installs already in")
        #expect(ids.allSatisfy { CohortBucket.includes(key: "attest_percent", installID: $0, percent: 100) })
        #expect(!ids.contains { CohortBucket.includes(key: "attest_percent", installID: $0, percent: 0) })
    }

    /// Through the agent: an app extension never tries (DeviceCheck does not support them), and
    /// an install outside `attest_percent` uploads unattested.
    @MainActor @Test(arguments: [(false, 100.0, true), (true, 100.0, false), (false, 0.0, false)])
    func onlyAnOnboardedAppAttestsNeverAnExtension(extension isExtension: Bool, percent: Double, signs: Bool) async throws {
        let service = ScriptedService()
        let transport = RecordingTransport(config: #"{"enabled": true, "attest_percent": \#(percent)}"#)
        let harness = AgentHarness(transport: transport) { settings in
            settings.appAttest = service
            settings.host = HostApp(distribution: .testFlight, isAppExtension: isExtension)
        }
        await harness.agent.syncNow()  // the config first
        harness.agent.startSession()
        await harness.agent.syncNow()
        let sessions = try #require(transport.requests.first { $0.path == "/v1/sessions" })
        #expect((sessions.headers["Watchdog-Assertion"] != nil) == signs)
        #expect((service.generated > 0) == signs)
    }
}
