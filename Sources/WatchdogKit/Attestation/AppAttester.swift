import Foundation
import Locking
import WatchdogWire

/// Attests this install's App Attest key with watchdogd once, then signs each upload
/// (docs/security.md, "Attested installs"), as Apple's "Establishing your app's integrity" asks:
///
/// - no key: `generateKey`, saved (`app-attest.json` in the storage directory) with the build's
///   App Attest environment — a build of the other environment makes a new key;
/// - key not attested: `POST /v1/attest/challenge`, `attestKey` over it, `POST /v1/attest`. When
///   `attestKey` fails with `serverUnavailable` (or another transient error), the next try uses
///   the same key and the same challenge — so the same client-data hash — while the challenge is
///   good; a key App Attest calls invalid is replaced at once;
/// - an attestation Apple gave is saved before it is uploaded, and only its upload is retried:
///   a key is attested by Apple once (attesting it again burns it). `201`, or `409
///   key_already_attested` (the first upload arrived, its answer did not), marks it attested; a
///   challenge the server no longer holds (`challenge_expired`, `challenge_unknown`: the upload
///   failed for longer than the challenge lives) leaves the attestation useless, and the next try
///   makes a new key;
/// - attested: each upload gets `Watchdog-Assertion: <key id>.<assertion over its body>`.
///
/// `isSupported == false` (simulators, older devices), and any step that fails, leave the
/// upload unattested: under `observe` it is stored as before; under `require` the server
/// answers `401` and the uploader keeps the batch and backs off, as for any refusal. A key the
/// server does not know (`401 assertion_unknown_key`: its data was reset) is replaced. Failed
/// attempts wait `retryInterval`, doubling up to `maximumBackoff`.
public final class AppAttester: Sendable {
    private let service: any AppAttestService
    private let transport: any HTTPTransport
    private let endpoint: URL
    private let stateFile: URL
    private let clock: @Sendable () -> Double
    private let wallClock: @Sendable () -> Date
    private let logger: TaggedLogger
    private let retryInterval: Double
    private let maximumBackoff: Double
    private let environment: String?

    /// What `app-attest.json` holds.
    struct Saved: Codable, Equatable {
        var keyID: String
        var attested: Bool
        /// The build's App Attest environment when the key was made (`development`, `production`).
        var environment: String?
        /// The challenge the key is being attested over (base64) and when the server lets it go
        /// (milliseconds since the epoch): a retry uses it again while it is good.
        var challenge: String?
        var challengeExpiresAt: Int64?
        /// Apple's attestation object (base64), saved before its upload: only the upload is retried.
        var attestation: String?

        enum CodingKeys: String, CodingKey {
            case keyID = "key_id"
            case attested, environment, challenge
            case challengeExpiresAt = "challenge_expires_at"
            case attestation
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
    ///   - stateFile: where the key, its attestation and its challenge are kept between launches.
    ///   - environment: this build's App Attest environment (`HostApp.appAttestEnvironment`); a key
    ///     saved by a build of the other environment is replaced. `nil`: not known, kept.
    ///   - clock: monotonic seconds.
    ///   - wallClock: the time a challenge's expiry is compared with.
    ///   - logger: where attestation failures are logged.
    ///   - retryInterval: seconds before a failed attestation is tried again.
    ///   - maximumBackoff: the longest wait between attempts after repeated failures, seconds.
    public init(service: any AppAttestService, transport: any HTTPTransport, endpoint: URL, ingestKey: String, installID: String,
                stateFile: URL, environment: String? = nil, clock: @escaping @Sendable () -> Double, wallClock: @escaping @Sendable () -> Date = Date.init,
                logger: TaggedLogger, retryInterval: Double = 30, maximumBackoff: Double = 3600) {
        self.service = service
        self.transport = transport
        self.endpoint = endpoint
        self.stateFile = stateFile
        self.environment = environment
        self.clock = clock
        self.wallClock = wallClock
        self.logger = logger
        self.retryInterval = retryInterval
        self.maximumBackoff = maximumBackoff
        state = Locked(State(saved: nil, ingestKey: ingestKey, installID: installID))
        load()
    }

    /// Reads the saved key, dropping one of another environment.
    private func load() {
        let saved = (try? Data(contentsOf: stateFile)).flatMap { try? JSONDecoder().decode(Saved.self, from: $0) }
        if let saved, let environment, let made = saved.environment, made != environment {
            logger.log("App Attest key made by a \(made) build, this one is \(environment): a new key is attested")
            try? FileManager.default.removeItem(at: stateFile)
            return
        }
        state.withLock { if $0.saved == nil { $0.saved = saved } }
    }

    /// The ingest key the challenge and attestation requests use (`Uploader.setIngestKey`).
    public func setIngestKey(_ key: String) { state.withLock { $0.ingestKey = key } }

    /// The install id, once it could be read (a launch before the first unlock starts without it);
    /// the saved key is read again too.
    public func setInstallID(_ installID: String) {
        state.withLock { $0.installID = installID }
        load()
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

    /// The server did not know the key (`assertion_unknown_key`: its data was reset). Apple
    /// attests a key once: a new one is made and attested.
    public func serverForgotKey() {
        forget("the server does not know the key")
    }

    /// The attested key id, attesting first if needed; `nil` while it cannot be had.
    private func attestedKey() async -> String? {
        let (saved, due, ingestKey, installID) = state.withLock { ($0.saved, $0.nextAttemptAt, $0.ingestKey, $0.installID) }
        if let saved, saved.attested { return saved.keyID }
        guard !installID.isEmpty, clock() >= due else { return nil }
        do {
            var current: Saved
            if let saved {
                current = saved
            } else {
                current = Saved(keyID: try await service.generateKey(), attested: false, environment: environment)
                update(current)
            }
            if current.attestation == nil {
                // The same challenge (so the same client-data hash) while the server still holds it.
                let good = current.challenge != nil && (current.challengeExpiresAt ?? 0) - 30_000 > Int64(wallClock().timeIntervalSince1970 * 1000)
                if !good {
                    let (challenge, expiresAt) = try await challenge(ingestKey: ingestKey)
                    current.challenge = challenge.base64EncodedString()
                    current.challengeExpiresAt = expiresAt
                    update(current)
                }
                let challenge = Data(base64Encoded: current.challenge ?? "") ?? Data()
                let object = try await service.attestKey(current.keyID, challenge: challenge)
                current.attestation = object.base64EncodedString()
                update(current)
            }
            try await register(current, ingestKey: ingestKey, installID: installID)
            current.attested = true
            current.attestation = nil
            current.challenge = nil
            current.challengeExpiresAt = nil
            update(current)
            state.withLock { $0.failures = 0 }
            logger.log("App Attest key attested with watchdogd")
            return current.keyID
        } catch let refusal as ServerRefusal where refusal.spentChallenge {
            forget("its attestation's challenge is gone (\(refusal))")
            return nil
        } catch {
            failed("attestation", error)
            return nil
        }
    }

    private struct ServerRefusal: Error, CustomStringConvertible {
        var description: String
        /// The server no longer holds the challenge the attestation was made over.
        var spentChallenge = false
    }

    private func challenge(ingestKey: String) async throws -> (Data, Int64?) {
        let response = try await transport.send(TransportRequest(method: "POST", url: endpoint.appendingPathComponent("v1/attest/challenge"),
                                                                 headers: ["Authorization": "Bearer \(ingestKey)"], body: Data()))
        struct Challenge: Decodable {
            var challenge: String
            var expiresAt: Int64?

            enum CodingKeys: String, CodingKey {
                case challenge
                case expiresAt = "expires_at"
            }
        }
        guard response.status == 201, let issued = try? JSONDecoder().decode(Challenge.self, from: response.body),
              let challenge = Data(base64Encoded: issued.challenge) else {
            throw ServerRefusal(description: "challenge: status \(response.status) \(String(decoding: response.body.prefix(200), as: UTF8.self))")
        }
        return (challenge, issued.expiresAt)
    }

    /// Uploads the saved attestation; returns once the server holds the key for this install.
    private func register(_ saved: Saved, ingestKey: String, installID: String) async throws {
        let body = try JSONSerialization.data(withJSONObject: ["install_id": installID, "key_id": saved.keyID, "challenge": saved.challenge ?? "",
                                                               "attestation": saved.attestation ?? ""])
        let response = try await transport.send(TransportRequest(method: "POST", url: endpoint.appendingPathComponent("v1/attest"),
                                                                 headers: ["Authorization": "Bearer \(ingestKey)", "Content-Type": "application/json"], body: body))
        let code = (try? JSONDecoder().decode(ErrorResponse.self, from: response.body))?.error.code
        if response.status == 201 || code == "key_already_attested" { return }
        throw ServerRefusal(description: "attest: status \(response.status) \(code ?? "")",
                            spentChallenge: code == "challenge_expired" || code == "challenge_unknown")
    }

    private func update(_ saved: Saved) {
        state.withLock { $0.saved = saved }
        save()
    }

    /// Drops the key (and what was saved with it): the next try makes a new one, at once.
    private func forget(_ reason: String) {
        state.withLock { state in
            state.saved = nil
            state.nextAttemptAt = -.infinity
        }
        save()
        logger.log("App Attest: \(reason); a new key is attested next")
    }

    private func failed(_ step: String, _ error: any Error) {
        if !(error is ServerRefusal), service.classify(error) == .invalidKey {
            forget("the key is invalid (\(step) failed: \(error))")
            return
        }
        let unavailable = !(error is ServerRefusal) && service.classify(error) == .serverUnavailable
        let wait = state.withLock { state -> Double in
            state.failures += 1
            let wait = min(maximumBackoff, retryInterval * pow(2, Double(min(state.failures - 1, 20))))
            state.nextAttemptAt = clock() + wait
            return wait
        }
        logger.log("App Attest \(step) failed (\(error))\(unavailable ? "; Apple's service is unavailable: the same key and challenge are tried again" : "") in \(Int(wait)) s; uploading unattested")
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
