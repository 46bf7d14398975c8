/// Every way an attestation or an assertion is refused, each with its own code (docs/api.md,
/// "Attested installs"); rendered through `APIError` like every other failure.
enum AttestationError: Error, Equatable, Sendable {
    /// The attestation object or assertion is not the CBOR structure App Attest sends.
    case malformed(String)
    /// The challenge was never issued for this app, or was used already.
    case unknownChallenge
    case expiredChallenge
    /// The `x5c` chain does not end at the pinned root (or a certificate is invalid or expired).
    case untrustedChain(String)
    /// The credential certificate's nonce is not SHA-256(authData ‖ SHA-256(challenge)).
    case nonceMismatch
    /// The RP id hash is not SHA-256 of this app's `TEAMID.bundle.id`.
    case appMismatch
    /// The key id is not SHA-256 of the certificate's public key, or not the credential id.
    case keyMismatch
    case counterNotZero
    case environmentMismatch(expected: String)
    case alreadyAttested
    case notConfigured
    // Assertions.
    case missingAssertion
    case unknownKey
    case invalidSignature
    case counterNotIncreasing
    case installMismatch
    case assertionMalformed(String)
    case assertionAppMismatch

    var apiError: APIError {
        switch self {
        case .malformed(let why):
            APIError(status: 400, code: "attestation_malformed", message: "not an App Attest structure: \(why.prefix(200))")
        case .unknownChallenge:
            APIError(status: 403, code: "challenge_unknown", message: "the challenge was not issued for this app or was used already; get a new one from POST /v1/attest/challenge")
        case .expiredChallenge:
            APIError(status: 403, code: "challenge_expired", message: "the challenge expired (they last \(AttestationService.challengeLifetimeSeconds) s); get a new one")
        case .untrustedChain(let why):
            APIError(status: 403, code: "attestation_untrusted_chain", message: "the certificate chain does not end at Apple's App Attestation root: \(why.prefix(200))")
        case .nonceMismatch:
            APIError(status: 403, code: "attestation_nonce_mismatch", message: "the credential certificate's nonce is not SHA-256(authData ‖ SHA-256(challenge))")
        case .appMismatch:
            APIError(status: 403, code: "attestation_app_mismatch", message: "the RP id hash is not SHA-256 of this app's TEAMID.bundle.id")
        case .keyMismatch:
            APIError(status: 403, code: "attestation_key_mismatch", message: "the key id is not the SHA-256 of the attested public key and the credential id")
        case .counterNotZero:
            APIError(status: 403, code: "attestation_counter_not_zero", message: "an attestation's counter must be 0")
        case .environmentMismatch(let expected):
            APIError(status: 403, code: "attestation_environment_mismatch", message: "the AAGUID is not App Attest's \(expected) environment, which this app accepts")
        case .alreadyAttested:
            APIError(status: 409, code: "key_already_attested", message: "this key id was attested already")
        case .notConfigured:
            APIError(status: 409, code: "attestation_off", message: "attestation is off for this app (or it has no team id and bundle id)")
        case .missingAssertion:
            APIError(status: 401, code: "assertion_required", message: "this app requires attested installs: send Watchdog-Assertion: <key id>.<assertion>, both base64")
        case .unknownKey:
            APIError(status: 401, code: "assertion_unknown_key", message: "no attested key with this key id for this app; attest it first (POST /v1/attest)")
        case .invalidSignature:
            APIError(status: 401, code: "assertion_invalid_signature", message: "the assertion's signature does not verify over SHA-256(authenticatorData ‖ SHA-256(body))")
        case .counterNotIncreasing:
            APIError(status: 401, code: "assertion_counter_replayed", message: "the assertion's counter is not above the last one seen for this key: a replay, or an assertion made before another")
        case .installMismatch:
            APIError(status: 403, code: "assertion_install_mismatch", message: "the items' install_id is not the install this key was attested for")
        case .assertionMalformed(let why):
            APIError(status: 400, code: "assertion_malformed", message: "Watchdog-Assertion is not <key id>.<CBOR assertion>, both base64: \(why.prefix(200))")
        case .assertionAppMismatch:
            APIError(status: 401, code: "assertion_app_mismatch", message: "the assertion's RP id hash is not SHA-256 of this app's TEAMID.bundle.id")
        }
    }
}
