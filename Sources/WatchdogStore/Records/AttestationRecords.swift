/// An App Attest key the server verified (docs/security.md, "Attested installs"): one genuine instance of
/// the app on one Apple device, bound to the install id it attested for.
public struct AttestedKey: Sendable, Equatable {
    public var app: String
    /// SHA-256 of `publicKey` (32 bytes): App Attest's key identifier.
    public var keyID: [UInt8]
    public var installID: String
    /// The uncompressed P-256 point (65 bytes, X9.63).
    public var publicKey: [UInt8]
    /// The last counter accepted (0 after the attestation).
    public var counter: Int64
    /// `development` or `production`.
    public var environment: String
    /// Milliseconds since the epoch.
    public var attestedAt: Int64
    /// It is the first key that attested its install: an install id belongs to that key, and
    /// only its assertions make a session attested (read from the store; set there).
    public var owner = true

    public init(app: String, keyID: [UInt8], installID: String, publicKey: [UInt8], counter: Int64, environment: String, attestedAt: Int64) {
        self.app = app
        self.keyID = keyID
        self.installID = installID
        self.publicKey = publicKey
        self.counter = counter
        self.environment = environment
        self.attestedAt = attestedAt
    }
}

/// The counter of an App Attest assertion, for its key: what an upload signed with it moves
/// the key's counter to (`IngestBatch.assertion`).
public struct AssertionCounter: Sendable, Equatable {
    public var app: String
    public var keyID: [UInt8]
    public var counter: Int64

    public init(app: String, keyID: [UInt8], counter: Int64) {
        self.app = app
        self.keyID = keyID
        self.counter = counter
    }
}

/// What storing an attested key did.
public enum AttestedKeySave: Sendable, Equatable {
    /// Stored; `owner`: no key had attested its install before (else its uploads are
    /// accepted, but make no session attested: the install is the first key's).
    case saved(owner: Bool)
    /// The app has this key id already: nothing changed.
    case keyExists
}

/// What using an attestation challenge found.
public enum ChallengeUse: Sendable, Equatable {
    /// It was issued for the app and unused: it is used now.
    case consumed
    /// It was issued but is past its time (it is gone now).
    case expired
    /// Never issued for this app, or used already.
    case unknown
}
