/// The authenticator data of an App Attest attestation or assertion (WebAuthn's layout):
/// the RP id hash (SHA-256 of `TEAMID.bundle.id`), a flags byte, a big-endian 32-bit
/// counter and, in an attestation only, the attested credential data — AAGUID (the
/// environment), credential id length and credential id (the key id).
struct AuthenticatorData: Sendable {
    var rpIDHash: [UInt8]
    var flags: UInt8
    var counter: UInt32
    /// In an attestation: `appattestdevelop`, or `appattest` and seven zero bytes.
    var aaguid: [UInt8]?
    var credentialID: [UInt8]?

    /// Reads the fixed part, and the attested credential data when `attested` (it must be there).
    init?(_ bytes: [UInt8], attested: Bool) {
        guard bytes.count >= 37 else { return nil }
        rpIDHash = Array(bytes[0..<32])
        flags = bytes[32]
        counter = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        guard attested else { return }
        guard bytes.count >= 55 else { return nil }
        aaguid = Array(bytes[37..<53])
        let length = Int(bytes[53]) << 8 | Int(bytes[54])
        guard bytes.count >= 55 + length else { return nil }
        credentialID = Array(bytes[55..<55 + length])
    }

    /// The AAGUID of each environment.
    static let developmentAAGUID = Array("appattestdevelop".utf8)
    static let productionAAGUID = Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
}
