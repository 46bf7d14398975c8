import Crypto
import Foundation
import SwiftASN1
import X509

/// Apple's server-side checks of an attestation object ("Validating apps that connect to your
/// server", steps 1–9; the receipt is kept by Apple's own fraud service and not used here).
struct AttestationVerifier: Sendable {
    /// The roots a chain may end at: Apple's App Attestation root, or a test's own CA
    /// (`WatchdogApplication`'s `attestationRoots`, never from a config file or the CLI).
    let roots: [Certificate]

    /// What an accepted attestation establishes.
    struct Attested: Sendable, Equatable {
        /// The uncompressed P-256 point (65 bytes, X9.63).
        var publicKey: [UInt8]
        var counter: UInt32
        /// The environment the key's AAGUID names.
        var environment: AttestationSettings.KeyEnvironment
    }

    /// The extension of the credential certificate that holds the nonce.
    static let nonceExtension: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 8, 2]

    /// Checks `object` for `keyID` against `challenge` (the raw bytes the server issued).
    /// `environments`: the key environments the app accepts (one, or both).
    func verify(object: [UInt8], keyID: [UInt8], challenge: [UInt8], appID: String, environments: [AttestationSettings.KeyEnvironment],
                at time: Date) throws(AttestationError) -> Attested {
        let decoded: CBOR
        do { decoded = try CBOR.decode(object) } catch { throw .malformed("\(error.reason) at byte \(error.offset)") }
        guard decoded["fmt"]?.textString == "apple-appattest" else { throw .malformed("fmt is not apple-appattest") }
        guard let authDataBytes = decoded["authData"]?.byteString else { throw .malformed("no authData") }
        guard case .array(let chain)? = decoded["attStmt"]?["x5c"], chain.count >= 2, chain.count <= 4 else { throw .malformed("attStmt.x5c is not 2 to 4 certificates") }
        // 1. The chain: x5c[0] is the credential certificate, the rest intermediates.
        var certificates: [Certificate] = []
        for element in chain {
            guard let der = element.byteString else { throw .malformed("an x5c element is not a byte string") }
            do { certificates.append(try Certificate(derEncoded: der)) } catch { throw .malformed("an x5c element is not an X.509 certificate") }
        }
        let credential = certificates[0]
        if let failure = Self.chainFailure(certificates, roots: roots, at: time) { throw .untrustedChain(failure) }
        // 2–4. nonce = SHA-256(authData ‖ SHA-256(challenge)), in the credential certificate.
        let clientDataHash = Array(SHA256.hash(data: challenge))
        let nonce = Array(SHA256.hash(data: authDataBytes + clientDataHash))
        guard let stated = Self.nonce(in: credential) else { throw .malformed("the credential certificate has no readable nonce extension") }
        guard constantTimeEquals(stated, nonce) else { throw .nonceMismatch }
        // 5. The key id is the SHA-256 of the public key's uncompressed point.
        guard let key = P256.Signing.PublicKey(credential.publicKey) else { throw .malformed("the credential key is not a P-256 key") }
        let point = Array(key.x963Representation)
        guard Array(SHA256.hash(data: point)) == keyID else { throw .keyMismatch }
        guard let authData = AuthenticatorData(authDataBytes, attested: true) else { throw .malformed("authData is too short") }
        // 6. RP id hash, 7. counter 0, 8. environment, 9. credential id.
        guard authData.rpIDHash == Array(SHA256.hash(data: Array(appID.utf8))) else { throw .appMismatch }
        guard authData.counter == 0 else { throw .counterNotZero }
        guard let environment = environments.first(where: { authData.aaguid == $0.aaguid }) else {
            throw .environmentMismatch(expected: environments.map(\.rawValue).joined(separator: " or "))
        }
        guard authData.credentialID == keyID else { throw .keyMismatch }
        return Attested(publicKey: point, counter: authData.counter, environment: environment)
    }

    /// Why `chain` (leaf first) is not a chain of valid certificates, each signed by the next
    /// and the last by one of `roots`; `nil` when it is. App Attest's chain is linear —
    /// credential certificate, Apple's intermediate, root — so no path is built: each link is
    /// checked where it stands (validity at `time`, the issuer's name and signature, a CA above
    /// the leaf), synchronously, on the request's thread.
    static func chainFailure(_ chain: [Certificate], roots: [Certificate], at time: Date) -> String? {
        for (index, certificate) in chain.enumerated() {
            guard certificate.notValidBefore <= time, time <= certificate.notValidAfter else { return "certificate \(index) is not valid at this time" }
            if index > 0 {
                guard case .isCertificateAuthority? = try? certificate.extensions.basicConstraints else { return "certificate \(index) is not a CA" }
            }
            guard index + 1 < chain.count else { break }
            let issuer = chain[index + 1]
            guard issuer.subject == certificate.issuer, issuer.publicKey.isValidSignature(certificate.signature, for: certificate) else {
                return "certificate \(index) is not signed by certificate \(index + 1)"
            }
        }
        guard let last = chain.last else { return "no certificates" }
        let anchored = roots.contains { root in
            root.subject == last.issuer && root.notValidBefore <= time && time <= root.notValidAfter && root.publicKey.isValidSignature(last.signature, for: last)
        }
        return anchored ? nil : "the last certificate is not signed by the pinned root"
    }

    /// The octet string in `SEQUENCE { [1] EXPLICIT OCTET STRING }` of the nonce extension.
    static func nonce(in certificate: Certificate) -> [UInt8]? {
        guard let value = certificate.extensions[oid: nonceExtension]?.value,
              let root = try? DER.parse(value), root.identifier == .sequence, case .constructed(let children) = root.content,
              let tagged = children.first(where: { _ in true }), tagged.identifier == ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific),
              case .constructed(let inner) = tagged.content, let octets = inner.first(where: { _ in true }),
              let string = try? ASN1OctetString(derEncoded: octets) else { return nil }
        return Array(string.bytes)
    }
}
