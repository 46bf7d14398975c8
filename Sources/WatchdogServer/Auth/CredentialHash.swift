import Crypto

/// The one hash every stored secret goes through: ingest keys and tokens, dashboard session
/// cookies and sign-in link codes are stored as their SHA-256, never in clear.
///
/// Credentials are 256-bit random secrets, so a fast hash is the right tool (no password
/// stretching needed). The hash is swift-crypto's (`Crypto.SHA256`: BoringSSL on Linux,
/// CryptoKit's API on Apple platforms), not one of our own. `package` so that
/// `Tests/Benchmarks/hash` can time it.
package enum CredentialHash {
    /// SHA-256 (FIPS 180-4) of `secret`, 32 bytes.
    package static func sha256(_ secret: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: secret))
    }
}
