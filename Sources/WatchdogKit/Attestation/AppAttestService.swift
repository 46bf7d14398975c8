import Foundation

/// What WatchdogKit needs of App Attest (DeviceCheck's `DCAppAttestService`): a stand-in for it
/// keeps `AppAttester`'s logic testable on Linux. `DeviceCheckAppAttestService` is the real one.
///
/// The service hashes: `attestKey` is given the server's challenge and attests with
/// `clientDataHash` = SHA-256(challenge); `generateAssertion` is given the request body and
/// asserts over SHA-256(body) — what watchdogd checks.
public protocol AppAttestService: Sendable {
    /// `false` on simulators and devices without the Secure Enclave support: uploads go unattested.
    var isSupported: Bool { get }
    /// A new key in the Secure Enclave; its identifier (base64 of SHA-256 of its public key).
    func generateKey() async throws -> String
    /// The attestation object for `keyID` over SHA-256(`challenge`) (Apple's servers are asked).
    func attestKey(_ keyID: String, challenge: Data) async throws -> Data
    /// The assertion (CBOR) for `keyID` over SHA-256(`body`).
    func generateAssertion(_ keyID: String, body: Data) async throws -> Data
    /// What an error of the calls above means for the attester.
    func classify(_ error: any Error) -> AppAttestFailure
}

/// The App Attest errors that change what `AppAttester` does next (DeviceCheck's `DCError`).
public enum AppAttestFailure: Sendable, Equatable {
    /// `DCError.invalidKey`: the key is gone or unusable (the app was restored to another
    /// device, reinstalled…): make and attest a new one.
    case invalidKey
    /// `DCError.serverUnavailable`: Apple's service could not be reached; retry later, same key.
    case serverUnavailable
    /// Anything else (`invalidInput`, `featureUnsupported`, `unknownSystemFailure`): retry later.
    case other
}
