#if canImport(DeviceCheck) && canImport(CryptoKit)
import CryptoKit
import DeviceCheck
import Foundation

/// `AppAttestService` over DeviceCheck's `DCAppAttestService.shared` (iOS 14+: below it, leave
/// `WatchdogSettings.appAttest` nil; on simulators `isSupported` is false). Uploads then go
/// unattested.
@available(iOS 14.0, *)
public struct DeviceCheckAppAttestService: AppAttestService {
    /// The shared `DCAppAttestService`.
    public init() {}

    /// `DCAppAttestService.shared.isSupported`.
    public var isSupported: Bool { DCAppAttestService.shared.isSupported }

    /// A new key pair in the Secure Enclave; returns its key id.
    public func generateKey() async throws -> String {
        return try await withCheckedThrowingContinuation { continuation in
            DCAppAttestService.shared.generateKey { keyID, error in
                if let keyID { continuation.resume(returning: keyID) } else { continuation.resume(throwing: error ?? DCError(.unknownSystemFailure)) }
            }
        }
    }

    /// Apple's attestation object for `keyID`, over SHA-256 of the server's `challenge`.
    public func attestKey(_ keyID: String, challenge: Data) async throws -> Data {
        let hash = Data(SHA256.hash(data: challenge))
        return try await withCheckedThrowingContinuation { continuation in
            DCAppAttestService.shared.attestKey(keyID, clientDataHash: hash) { object, error in
                if let object { continuation.resume(returning: object) } else { continuation.resume(throwing: error ?? DCError(.unknownSystemFailure)) }
            }
        }
    }

    /// An assertion by `keyID` over SHA-256 of the request `body`.
    public func generateAssertion(_ keyID: String, body: Data) async throws -> Data {
        let hash = Data(SHA256.hash(data: body))
        return try await withCheckedThrowingContinuation { continuation in
            DCAppAttestService.shared.generateAssertion(keyID, clientDataHash: hash) { assertion, error in
                if let assertion { continuation.resume(returning: assertion) } else { continuation.resume(throwing: error ?? DCError(.unknownSystemFailure)) }
            }
        }
    }

    /// `DCError.invalidKey` and `.serverUnavailable` by name; anything else is `.other`.
    public func classify(_ error: any Error) -> AppAttestFailure {
        guard let error = error as? DCError else { return .other }
        switch error.code {
        case .invalidKey: return .invalidKey
        case .serverUnavailable: return .serverUnavailable
        default: return .other
        }
    }
}
#endif
