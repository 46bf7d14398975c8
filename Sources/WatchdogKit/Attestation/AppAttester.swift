import Foundation
import Locking
import WatchdogWire

/// Attests this install's App Attest key with watchdogd once, then signs each upload
/// (README, "Attested installs"). The steps, and what each failure leads to:
///
/// - no key: `generateKey`, saved (`app-attest.json` in the storage directory);
/// - key not attested: `POST /v1/attest/challenge`, `attestKey` over it, `POST /v1/attest`;
///   `201` (or `409 key_already_attested`) marks it attested, saved;
/// - attested: each upload gets `Watchdog-Assertion: <key id>.<assertion over its body>`.
///
/// `isSupported == false` (simulators, older devices), and any step that fails, leave the
/// upload unattested: under `observe` it is stored as before; under `require` the server
/// answers `401` and the uploader keeps the batch and backs off, as for any refusal. A key that
/// App Attest calls invalid (after a restore to another device) is forgotten and the next
/// upload attests a new one; a key the server does not know (`401 assertion_unknown_key`) is
/// attested again. Failed attempts wait `retryInterval`, doubling up to `maximumBackoff`.
public final class AppAttester: Sendable {
    private let service: any AppAttestService
    private let transport: any HTTPTransport
    private let endpoint: URL
    private let stateFile: URL
    private let clock: @Sendable () -> Double
    private let logger: TaggedLogger
    private let retryInterval: Double
    private let maximumBackoff: Double

    struct Saved: Codable, Equatable {
        var keyID: String
        var attested: Bool

        enum CodingKeys: String, CodingKey {
            case keyID = "key_id"
            case attested
        }
    }

    private struct State {
        var saved: Saved?
        var ingestKey: String
        var installID: String
        var nextAttemptAt = -Double.infinity
        var failures = 0
    }
    private let state: Locked<State>

    /// - Parameters:
    ///   - service: DeviceCheck's App Attest in an app (`DeviceCheckAppAttestService`), a test CA in tests.
    ///   - transport: how the challenge and the attestation reach watchdogd.
    ///   - endpoint: the server's base URL.
    ///   - ingestKey: the app's ingest key (`setIngestKey` changes it).
    ///   - installID: the install the key is attested for.
    ///   - stateFile: where the attested key id is kept between launches.
    ///   - clock: monotonic seconds.
    ///   - logger: where attestation failures are logged.
    ///   - retryInterval: seconds before a failed attestation is tried again.
    ///   - maximumBackoff: the longest wait between attempts after repeated failures, seconds.
    public init(service: any AppAttestService, transport: any HTTPTransport, endpoint: URL, ingestKey: String, installID: String,
                stateFile: URL, clock: @escaping @Sendable () -> Double, logger: TaggedLogger, retryInterval: Double = 30, maximumBackoff: Double = 3600) {
        self.service = service
        self.transport = transport
        self.endpoint = endpoint
        self.stateFile = stateFile
        self.clock = clock
        self.logger = logger
        self.retryInterval = retryInterval
        self.maximumBackoff = maximumBackoff
        let saved = (try? Data(contentsOf: stateFile)).flatMap { try? JSONDecoder().decode(Saved.self, from: $0) }
        state = Locked(State(saved: saved, ingestKey: ingestKey, installID: installID))
    }

    /// The install id, once it could be read (a launch before the first unlock starts without it);
    /// the saved key is read again too.
    public func setInstallID(_ installID: String) {
        let saved = (try? Data(contentsOf: stateFile)).flatMap { try? JSONDecoder().decode(Saved.self, from: $0) }
        state.withLock { state in
            state.installID = installID
            if state.saved == nil { state.saved = saved }
        }
    }

    /// Forgets the key and its attestation, on disk too (`WatchdogAgent.deleteUnsentData()`):
    /// the next upload attests a new key.
    public func reset() {
        state.withLock { state in
            state.saved = nil
            state.failures = 0
            state.nextAttemptAt = -.infinity
        }
        save()
    }

    /// The ingest key the challenge and attestation requests use (`Uploader.setIngestKey`).
    public func setIngestKey(_ key: String) { state.withLock { $0.ingestKey = key } }

    /// Whether this install's key is attested (saved across launches).
    public var isAttested: Bool { state.withLock { $0.saved?.attested ?? false } }

    /// The `Watchdog-Assertion` value for an upload of `body` (its JSON before gzip), or `nil`
    /// when the upload goes unattested.
    public func assertionHeader(for body: Data) async -> String? {
        guard service.isSupported else { return nil }
        guard let keyID = await attestedKey() else { return nil }
        do {
            let assertion = try await service.generateAssertion(keyID, body: body)
            return keyID + "." + assertion.base64EncodedString()
        } catch {
            failed("assertion", error)
            return nil
        }
    }

    /// The server did not know the key (`assertion_unknown_key`: its data was reset): attest it again.
    public func serverForgotKey() {
        state.withLock { state in
            if state.saved != nil { state.saved?.attested = false }
        }
        save()
    }

    /// The attested key id, attesting first if needed; `nil` while it cannot be had.
    private func attestedKey() async -> String? {
        let (saved, due, ingestKey, installID) = state.withLock { ($0.saved, $0.nextAttemptAt, $0.ingestKey, $0.installID) }
        guard !installID.isEmpty else { return nil }
        if let saved, saved.attested { return saved.keyID }
        guard clock() >= due else { return nil }
        do {
            let keyID: String
            if let saved { keyID = saved.keyID } else {
                keyID = try await service.generateKey()
                state.withLock { $0.saved = Saved(keyID: keyID, attested: false) }
                save()
            }
            let challenge = try await challenge(ingestKey: ingestKey)
            let object = try await service.attestKey(keyID, challenge: challenge)
            guard try await register(keyID: keyID, challenge: challenge, object: object, ingestKey: ingestKey, installID: installID) else { return nil }
            state.withLock { state in
                state.saved = Saved(keyID: keyID, attested: true)
                state.failures = 0
            }
            save()
            logger.log("App Attest key attested with watchdogd")
            return keyID
        } catch {
            failed("attestation", error)
            return nil
        }
    }

    private struct ServerRefusal: Error, CustomStringConvertible {
        var description: String
    }

    private func challenge(ingestKey: String) async throws -> Data {
        let response = try await transport.send(TransportRequest(method: "POST", url: endpoint.appendingPathComponent("v1/attest/challenge"),
                                                                 headers: ["Authorization": "Bearer \(ingestKey)"], body: Data()))
        struct Challenge: Decodable { var challenge: String }
        guard response.status == 201, let text = try? JSONDecoder().decode(Challenge.self, from: response.body).challenge,
              let challenge = Data(base64Encoded: text) else {
            throw ServerRefusal(description: "challenge: status \(response.status) \(String(decoding: response.body.prefix(200), as: UTF8.self))")
        }
        return challenge
    }

    /// `true` once the server holds the key for this install.
    private func register(keyID: String, challenge: Data, object: Data, ingestKey: String, installID: String) async throws -> Bool {
        let body = try JSONSerialization.data(withJSONObject: ["install_id": installID, "key_id": keyID, "challenge": challenge.base64EncodedString(),
                                                               "attestation": object.base64EncodedString()])
        let response = try await transport.send(TransportRequest(method: "POST", url: endpoint.appendingPathComponent("v1/attest"),
                                                                 headers: ["Authorization": "Bearer \(ingestKey)", "Content-Type": "application/json"], body: body))
        let code = (try? JSONDecoder().decode(ErrorResponse.self, from: response.body))?.error.code
        if response.status == 201 || code == "key_already_attested" { return true }
        throw ServerRefusal(description: "attest: status \(response.status) \(code ?? "")")
    }

    private func failed(_ step: String, _ error: any Error) {
        let invalidKey = !(error is ServerRefusal) && service.classify(error) == .invalidKey
        let wait = state.withLock { state -> Double in
            if invalidKey { state.saved = nil }
            state.failures += 1
            let wait = invalidKey ? 0 : min(maximumBackoff, retryInterval * pow(2, Double(min(state.failures - 1, 20))))
            state.nextAttemptAt = clock() + wait
            return wait
        }
        if invalidKey { save() }
        logger.log("App Attest \(step) failed (\(error))\(invalidKey ? "; the key is invalid, a new one is attested next" : "; retrying in \(Int(wait)) s"); uploading unattested")
    }

    private func save() {
        let saved = state.withLock { $0.saved }
        if let saved, let data = try? JSONEncoder().encode(saved) {
            try? data.write(to: stateFile, options: .atomic)
        } else {
            try? FileManager.default.removeItem(at: stateFile)
        }
    }
}
