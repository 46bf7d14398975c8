import Foundation
import Locking
import WatchdogKit

/// DeviceCheck's `DCAppAttestService` stood in for by an `AppAttestFixture`'s CA, for
/// WatchdogKit's `AppAttester` in tests and in `watchdog-simulator`: keys live in memory
/// (one per `generateKey`, as the Secure Enclave makes them), attestations are the fixture's,
/// assertions count up per key. `invalidateAll` does what a restore to another device does.
public final class SimulatedAppAttestService: AppAttestService, Sendable {
    /// DCError.invalidKey's stand-in.
    public struct InvalidKey: Error {}

    public let fixture: AppAttestFixture
    /// `TEAMID.bundle.id`, hashed into every attestation and assertion.
    public let appID: String
    public let isSupported: Bool
    private let state = Locked<(keys: [String: AppAttestFixture.DeviceKey], invalid: Set<String>, generated: Int)>(([:], [], 0))

    public init(fixture: AppAttestFixture, appID: String, supported: Bool = true) {
        self.fixture = fixture
        self.appID = appID
        isSupported = supported
    }

    /// Keys made so far.
    public var generated: Int { state.withLock { $0.generated } }

    public func generateKey() async throws -> String {
        let key = AppAttestFixture.DeviceKey()
        state.withLock {
            $0.keys[key.keyIDBase64] = key
            $0.generated += 1
        }
        return key.keyIDBase64
    }

    public func attestKey(_ keyID: String, challenge: Data) async throws -> Data {
        guard let key = state.withLock({ $0.invalid.contains(keyID) ? nil : $0.keys[keyID] }) else { throw InvalidKey() }
        return Data(try fixture.attestation(key: key, challenge: Array(challenge), appID: appID))
    }

    public func generateAssertion(_ keyID: String, body: Data) async throws -> Data {
        let appID = self.appID
        return try state.withLock { state in
            guard !state.invalid.contains(keyID), var key = state.keys[keyID] else { throw InvalidKey() }
            key.counter += 1
            state.keys[keyID] = key
            return Data(key.assertion(body: Array(body), appID: appID, counter: key.counter))
        }
    }

    public func classify(_ error: any Error) -> AppAttestFailure { error is InvalidKey ? .invalidKey : .other }

    /// What a restore to another device does to every key made so far.
    public func invalidateAll() { state.withLock { $0.invalid.formUnion($0.keys.keys) } }
}
