import Foundation
import Crypto

/// Apple's server-side checks of an assertion ("Validating apps that connect to your server",
/// "Verify the assertion"): the client data is the request body exactly as the server decodes
/// it (after any Content-Encoding), and this server issues no per-request challenge — the
/// strictly increasing counter is what refuses a replay.
enum AssertionVerifier {
    /// A `Watchdog-Assertion` header split: the key id and the assertion's CBOR.
    struct Header: Sendable {
        var keyID: [UInt8]
        var assertion: [UInt8]

        /// Largest header value accepted (a real assertion is about 150 bytes of CBOR).
        static let maximumLength = 4096

        init(_ value: String) throws(AttestationError) {
            guard value.utf8.count <= Self.maximumLength else { throw .assertionMalformed("longer than \(Self.maximumLength) bytes") }
            let parts = value.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 2, let keyID = Data(base64Encoded: String(parts[0])), let assertion = Data(base64Encoded: String(parts[1])) else {
                throw .assertionMalformed("expected two base64 parts separated by one dot")
            }
            guard keyID.count == 32 else { throw .assertionMalformed("a key id is 32 bytes, got \(keyID.count)") }
            self.keyID = Array(keyID)
            self.assertion = Array(assertion)
        }
    }

    /// Checks `assertion` over `body` with `publicKey` and returns its counter. Step 5 — the
    /// counter above the stored one — is the caller's, as one compare-and-set in the store.
    static func verify(_ assertion: [UInt8], body: [UInt8], publicKey: P256.Signing.PublicKey, appIDHash: [UInt8]) throws(AttestationError) -> UInt32 {
        var limits = CBOR.Limits()
        limits.size = Header.maximumLength
        limits.depth = 2
        let decoded: CBOR
        do { decoded = try CBOR.decode(assertion, limits: limits) } catch { throw .assertionMalformed("\(error.reason) at byte \(error.offset)") }
        guard let signatureBytes = decoded["signature"]?.byteString, let authenticatorData = decoded["authenticatorData"]?.byteString else {
            throw .assertionMalformed("the CBOR map needs signature and authenticatorData byte strings")
        }
        guard let authData = AuthenticatorData(authenticatorData, attested: false) else { throw .assertionMalformed("authenticatorData is too short") }
        // 1–3. nonce = SHA-256(authenticatorData ‖ SHA-256(body)); the signature is ECDSA
        // P-256 with SHA-256 over the nonce.
        let clientDataHash = Array(SHA256.hash(data: body))
        let nonce = Array(SHA256.hash(data: authenticatorData + clientDataHash))
        guard let signature = try? P256.Signing.ECDSASignature(derRepresentation: signatureBytes),
              publicKey.isValidSignature(signature, for: nonce) else { throw .invalidSignature }
        // 4. The RP id.
        guard authData.rpIDHash == appIDHash else { throw .assertionAppMismatch }
        return authData.counter
    }
}
