import Crypto
import Dispatch
import Foundation
import Locking
import WatchdogHTTP
import WatchdogStore
import WatchdogWire
import X509

/// Attested installs (docs/security.md, "Attested installs"): each app's `AttestationSettings` (kept in
/// memory like `AdmissionService`'s), challenges, attestations, and the assertion check of
/// every upload.
final class AttestationService: Sendable {
    let store: any TelemetryStore
    let verifier: AttestationVerifier
    /// Refused attestations and uploads of the last hours, by code (the attestation card's).
    let refusals: RefusalCounter
    private let clock: @Sendable () -> Int64
    private let settingsCache: KeptSettings<AttestationSettings>
    /// Parsed public keys by app and key id: parsing a point costs more than verifying with it.
    private let keys = Locked<[KeyName: CachedKey]>([:])
    private let attestedInstalls = Locked<[String: (installs: Set<String>, readAt: CacheAge)]>([:])

    /// A challenge is good for 5 minutes and once; a network may hold 16 unused ones per app,
    /// one address of it 4: a flooder takes its own share, not its neighbours'.
    static let challengeLifetimeSeconds: Int64 = 300
    static let challengesPerNetwork = 16
    static let challengesPerAddress = 4
    static let maximumAgeSeconds: UInt64 = 10
    static let cachedKeys = 100_000

    private struct KeyName: Hashable {
        var app: String
        var keyID: [UInt8]
    }

    private struct CachedKey {
        var installID: String
        var publicKey: P256.Signing.PublicKey
        /// The first key that attested its install (`AttestedKey.owner`).
        var owner: Bool
    }

    /// Seconds a settings or installs read is kept (`maximumAgeSeconds`; tests give 0).
    let cacheSeconds: UInt64

    /// - Parameter roots: Apple's root unless a test gives its own CA (`WatchdogApplication`).
    init(store: any TelemetryStore, clock: @escaping @Sendable () -> Int64, roots: [Certificate], refusals: RefusalCounter,
         cacheSeconds: UInt64 = maximumAgeSeconds) {
        self.store = store
        self.refusals = refusals
        self.clock = clock
        self.cacheSeconds = cacheSeconds
        settingsCache = KeptSettings(maximumSeconds: cacheSeconds, defaults: AttestationSettings())
        verifier = AttestationVerifier(roots: roots)
    }

    // MARK: Settings

    /// The app's settings (`off` when none are stored). When the store cannot be read, the
    /// last settings read are kept — never replaced by the defaults, which would let a
    /// `require` app take unattested uploads for `cacheSeconds` after a database blip.
    func settings(app: String) -> AttestationSettings {
        settingsCache.value(app: app) { app in try store.attestationSettings(app: app).flatMap(AttestationSettings.decoded) }
    }

    func save(app: String, _ settings: AttestationSettings) throws(APIError) {
        try settings.validate()
        // The audit row: the stored settings before (`null`: the defaults) and after.
        AuditNote.set(beforeJSON: (try? store.attestationSettings(app: app)) ?? nil, afterJSON: settings.json)
        do {
            try store.saveAttestationSettings(app: app, json: settings.json)
        } catch StoreError.unknownApp {
            throw .notFound("app \(app) does not exist")
        } catch {
            throw .unavailable("the store could not save the settings; retry later")
        }
        settingsCache.keep(settings, app: app)
    }

    // MARK: Challenges and attestations

    /// A new challenge for `app`, stored (as its SHA-256) until used or expired.
    func challenge(app: String, network: String, address: String) throws(APIError) -> (challenge: [UInt8], expiresAt: Int64) {
        guard settings(app: app).mode != .off else { throw AttestationError.notConfigured.apiError }
        var generator = SystemRandomNumberGenerator()
        let challenge = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let now = clock(), expiresAt = now + Self.challengeLifetimeSeconds * 1000
        let issued = try storeCall {
            try store.issueAttestChallenge(app: app, hash: Array(SHA256.hash(data: challenge)), network: network, address: address, expiresAt: expiresAt, now: now,
                                           maximumPerNetwork: Self.challengesPerNetwork, maximumPerAddress: Self.challengesPerAddress)
        }
        guard issued else {
            throw APIError(status: 429, code: "too_many_challenges",
                           message: "this address holds \(Self.challengesPerAddress), or its network \(Self.challengesPerNetwork), unused challenges for \(app); use one or wait \(Self.challengeLifetimeSeconds) s",
                           headers: [("Retry-After", "\(Self.challengeLifetimeSeconds)")])
        }
        return (challenge, expiresAt)
    }

    /// Verifies an attestation and stores its key for `installID`, with the environment its
    /// AAGUID names. The challenge is used up first, whatever the verification finds — except
    /// when this install already holds this key: an install whose first attempt was stored but
    /// whose answer was lost sends the same attestation again, and hears `key_already_attested`
    /// (Apple's guidance: keep the attestation, retry only its upload).
    func attest(app: String, installID: String, keyID: [UInt8], object: [UInt8], challenge: [UInt8]) throws(APIError) -> AttestedKey {
        let settings = settings(app: app)
        guard settings.mode != .off, !settings.teamID.isEmpty else { throw AttestationError.notConfigured.apiError }
        if let stored = try storeCall({ try store.attestedKey(app: app, keyID: keyID) }), stored.installID == installID {
            throw AttestationError.alreadyAttested.apiError
        }
        let now = clock()
        switch try storeCall({ try store.consumeAttestChallenge(app: app, hash: Array(SHA256.hash(data: challenge)), now: now) }) {
        case .consumed: break
        case .expired: throw AttestationError.expiredChallenge.apiError
        case .unknown: throw AttestationError.unknownChallenge.apiError
        }
        let attested: AttestationVerifier.Attested
        do {
            attested = try verifier.verify(object: object, keyID: keyID, challenge: challenge, appID: settings.appID,
                                           environments: settings.environment.keyEnvironments, at: Date(timeIntervalSince1970: Double(now) / 1000))
        } catch {
            throw error.apiError
        }
        let key = AttestedKey(app: app, keyID: keyID, installID: installID, publicKey: attested.publicKey, counter: Int64(attested.counter),
                              environment: attested.environment.rawValue, attestedAt: now)
        switch try storeCall({ try store.saveAttestedKey(key) }) {
        case .saved(let owner):
            attestedInstalls.withLock { $0[app] = nil }
            var saved = key
            saved.owner = owner
            return saved
        case .keyExists:
            throw AttestationError.alreadyAttested.apiError
        }
    }

    // MARK: Uploads

    /// What the assertion of an upload established: the install its key was attested for, or
    /// none (`off`, or `observe` without an assertion).
    struct Upload: Sendable {
        var mode: AttestationSettings.Mode
        var installID: String?
        /// `observe` without an assertion: installs with an attested key, whose items only
        /// their key may post.
        var attestedInstalls: Set<String> = []
        /// The assertion's counter: the store moves the key's on in the ingest transaction and
        /// stores the request's items only if it moved (`IngestBatch.assertion`).
        var assertion: AssertionCounter?
        /// The key is the first that attested its install: the upload's session starts count as
        /// attested. Another key's are stored, and are not.
        var owner = false

        /// Whether the upload's session starts count as attested.
        var attests: Bool { installID != nil && owner }

        /// Why an item of `installID` is refused, or `nil` when it may be stored.
        func refusal(installID itemInstall: String?) -> ErrorDetail? {
            if let installID {
                guard itemInstall == installID else {
                    let error = AttestationError.installMismatch.apiError
                    return ErrorDetail(code: error.code, message: error.message)
                }
                return nil
            }
            guard mode == .observe, let itemInstall, attestedInstalls.contains(itemInstall) else { return nil }
            return ErrorDetail(code: "assertion_required", message: "install \(itemInstall.prefix(64)) has an attested key: its items need its Watchdog-Assertion")
        }
    }

    /// Checks the `Watchdog-Assertion` header of an upload against its body. Throws (nothing is
    /// stored) when the assertion is wrong, or missing under `require`. The key's counter is
    /// not moved here but by the store, in the transaction that stores the items (one commit).
    func check(_ request: HTTPRequest, app: String) throws(APIError) -> Upload {
        let settings = settings(app: app)
        guard settings.mode != .off else { return Upload(mode: .off) }
        guard let value = request.headers["watchdog-assertion"] else {
            guard settings.mode == .observe else { throw AttestationError.missingAssertion.apiError }
            return Upload(mode: .observe, attestedInstalls: try installs(app: app))
        }
        let header: AssertionVerifier.Header
        do { header = try AssertionVerifier.Header(value) } catch { throw error.apiError }
        guard let key = try key(app: app, keyID: header.keyID) else { throw AttestationError.unknownKey.apiError }
        let counter: UInt32
        do {
            counter = try AssertionVerifier.verify(header.assertion, body: request.body, publicKey: key.publicKey,
                                                   appIDHash: Array(SHA256.hash(data: Array(settings.appID.utf8))))
        } catch {
            throw error.apiError
        }
        return Upload(mode: settings.mode, installID: key.installID, assertion: AssertionCounter(app: app, keyID: header.keyID, counter: Int64(counter)),
                      owner: key.owner)
    }

    private func key(app: String, keyID: [UInt8]) throws(APIError) -> CachedKey? {
        let name = KeyName(app: app, keyID: keyID)
        if let cached = keys.withLock({ $0[name] }) { return cached }
        guard let stored = try storeCall({ try store.attestedKey(app: app, keyID: keyID) }),
              let publicKey = try? P256.Signing.PublicKey(x963Representation: stored.publicKey) else { return nil }
        let key = CachedKey(installID: stored.installID, publicKey: publicKey, owner: stored.owner)
        keys.withLock { keys in
            if keys.count >= Self.cachedKeys { keys.removeAll() }
            keys[name] = key
        }
        return key
    }

    /// The app's attested installs, read again after `cacheSeconds` or a new attestation.
    func installs(app: String) throws(APIError) -> Set<String> {
        let now = CacheAge.now
        if let entry = attestedInstalls.withLock({ $0[app] }), entry.readAt.isFresh(at: now.readAt, maximumSeconds: cacheSeconds) { return entry.installs }
        let installs = try storeCall { try store.attestedInstalls(app: app) }
        attestedInstalls.withLock { cache in
            if cache.count > 10_000 { cache.removeAll() }
            cache[app] = (installs, now)
        }
        return installs
    }
}
