import Crypto
import Foundation
import SwiftASN1
import X509

/// A stand-in for Apple's App Attest service, for tests: a CA of the test's own (root and
/// intermediate, as Apple's chain has) that `TestApplication(attestationRoots:)` trusts
/// instead of Apple's root, and devices whose keys it attests. Attestation objects and
/// assertions are built exactly as Apple's documentation lays them out ("Validating apps
/// that connect to your server"), so the server checks them as it would a real device's.
/// `@unchecked Sendable`: swift-crypto's private keys are not marked Sendable, but every key
/// here is immutable once made and only signs (which reads it).
public struct AppAttestFixture: @unchecked Sendable {
    public let rootPEM: String
    /// The root's private key (PEM): with `rootPEM`, what `init(rootPEM:rootKeyPEM:now:)` takes
    /// to attest in another process (`watchdog-simulator test-ca`).
    public let rootKeyPEM: String
    let intermediate: Certificate
    let intermediateKey: P256.Signing.PrivateKey
    /// Validity of every certificate: an hour before `now` to a year after.
    let now: Date

    /// A new CA. - Parameter now: the time the server verifies at (a `TestClock`'s date).
    public init(now: Date) throws {
        let rootKey = P384.Signing.PrivateKey()
        let rootName = try Self.rootName
        let root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey), notValidBefore: now - 3600, notValidAfter: now + 365 * 86_400,
            issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(rootKey))
        try self.init(root: root, rootKey: rootKey, now: now)
    }

    /// The CA `rootPEM` and `rootKeyPEM` of another fixture hold (a new intermediate under it).
    public init(rootPEM: String, rootKeyPEM: String, now: Date) throws {
        try self.init(root: try Certificate(pemEncoded: rootPEM), rootKey: try P384.Signing.PrivateKey(pemRepresentation: rootKeyPEM), now: now)
    }

    private init(root: Certificate, rootKey: P384.Signing.PrivateKey, now: Date) throws {
        self.now = now
        rootPEM = try root.serializeAsPEM().pemString
        rootKeyPEM = rootKey.pemRepresentation
        intermediateKey = P256.Signing.PrivateKey()
        let intermediateName = try DistinguishedName { CommonName("Test App Attestation CA 1"); OrganizationName("Watchdog tests") }
        intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey), notValidBefore: now - 3600, notValidAfter: now + 365 * 86_400,
            issuer: root.subject, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(rootKey))
    }

    static var rootName: DistinguishedName {
        get throws { try DistinguishedName { CommonName("Test App Attestation Root CA"); OrganizationName("Watchdog tests") } }
    }

    /// One device's App Attest key: made in the Secure Enclave on a phone, here in memory.
    public struct DeviceKey: @unchecked Sendable {
        public let privateKey: P256.Signing.PrivateKey
        public var counter: UInt32 = 0

        public init() { privateKey = P256.Signing.PrivateKey() }

        /// SHA-256 of the uncompressed public point: App Attest's key identifier.
        public var keyID: [UInt8] { Array(SHA256.hash(data: privateKey.publicKey.x963Representation)) }
        public var keyIDBase64: String { Data(keyID).base64EncodedString() }

        /// The `Watchdog-Assertion` header for `body`, with the next counter (or `counter`).
        public mutating func assertionHeader(body: [UInt8], appID: String, counter explicit: UInt32? = nil) -> String {
            counter = explicit ?? counter + 1
            return keyIDBase64 + "." + Data(assertion(body: body, appID: appID, counter: counter)).base64EncodedString()
        }

        /// `{signature, authenticatorData}`: authenticatorData is the RP id hash, flags and
        /// counter; the signature is ECDSA P-256 (SHA-256) over SHA-256(authenticatorData ‖ SHA-256(body)).
        public func assertion(body: [UInt8], appID: String, counter: UInt32, tamper: (inout [UInt8]) -> Void = { _ in }) -> [UInt8] {
            var authenticatorData = Array(SHA256.hash(data: Array(appID.utf8))) + [0x00] + Self.bigEndian(counter)
            let nonce = Array(SHA256.hash(data: authenticatorData + Array(SHA256.hash(data: body))))
            let signature = Array(try! privateKey.signature(for: nonce).derRepresentation)
            tamper(&authenticatorData)
            return TestCBOR.map([("signature", .bytes(signature)), ("authenticatorData", .bytes(authenticatorData))])
        }

        static func bigEndian(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)] }
    }

    /// What may be wrong in an attestation a test builds.
    public struct Faults: Sendable {
        public var appID: String?
        public var counter: UInt32 = 0
        public var aaguid: [UInt8]?
        public var nonce: [UInt8]?
        /// Changes authData after the nonce was computed over it.
        public var tamperAuthData = false
        public init() {}
    }

    /// The attestation object for `key` and `challenge` (the bytes the server issued).
    public func attestation(key: DeviceKey, challenge: [UInt8], appID: String, development: Bool = false, faults: Faults = Faults()) throws -> [UInt8] {
        let aaguid = faults.aaguid ?? (development ? Array("appattestdevelop".utf8) : Array("appattest".utf8) + [UInt8](repeating: 0, count: 7))
        // The credential public key (COSE_Key): kty EC2, alg ES256, crv P-256, x, y.
        let point = Array(key.privateKey.publicKey.x963Representation)
        let coseKey = TestCBOR.encode(.map([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), .bytes(Array(point[1...32]))),
                                            (.int(-3), .bytes(Array(point[33...64])))]))
        var authData = Array(SHA256.hash(data: Array((faults.appID ?? appID).utf8))) + [0x40] + DeviceKey.bigEndian(faults.counter)
            + aaguid + [0x00, 0x20] + key.keyID + coseKey
        let nonce = faults.nonce ?? Array(SHA256.hash(data: authData + Array(SHA256.hash(data: challenge))))
        if faults.tamperAuthData { authData[authData.count - 1] ^= 0x01 }
        let credential = try credentialCertificate(for: key, nonce: nonce)
        return TestCBOR.map([
            ("fmt", .text("apple-appattest")),
            ("attStmt", .map([(.text("x5c"), .array([.bytes(try Self.der(credential)), .bytes(try Self.der(intermediate))])), (.text("receipt"), .bytes([1, 2, 3]))])),
            ("authData", .bytes(authData)),
        ])
    }

    /// The credential certificate: the device key, with the nonce in extension 1.2.840.113635.100.8.2
    /// as `SEQUENCE { [1] EXPLICIT OCTET STRING }`.
    func credentialCertificate(for key: DeviceKey, nonce: [UInt8]) throws -> Certificate {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { sequence in
            try sequence.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific)) { tagged in
                try tagged.serialize(ASN1OctetString(contentBytes: ArraySlice(nonce)))
            }
        }
        let nonceExtension = Certificate.Extension(oid: [1, 2, 840, 113635, 100, 8, 2], critical: false, value: ArraySlice(serializer.serializedBytes))
        return try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.privateKey.publicKey), notValidBefore: now - 3600, notValidAfter: now + 3 * 86_400,
            issuer: intermediate.subject, subject: try DistinguishedName { CommonName(key.keyID.map { String(format: "%02x", $0) }.joined()) },
            signatureAlgorithm: .ecdsaWithSHA256, extensions: try Certificate.Extensions([nonceExtension]), issuerPrivateKey: .init(intermediateKey))
    }

    static func der(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}

/// A CBOR encoder for the tests' App Attest structures (definite lengths, as Apple's).
public enum TestCBOR: Sendable {
    case int(Int64)
    case bytes([UInt8])
    case text(String)
    case array([TestCBOR])
    case map([(TestCBOR, TestCBOR)])

    public static func map(_ pairs: [(String, TestCBOR)]) -> [UInt8] {
        encode(.map(pairs.map { (.text($0.0), $0.1) }))
    }

    public static func encode(_ value: TestCBOR) -> [UInt8] {
        switch value {
        case .int(let number): number >= 0 ? head(0, UInt64(number)) : head(1, UInt64(-1 - number))
        case .bytes(let bytes): head(2, UInt64(bytes.count)) + bytes
        case .text(let text): head(3, UInt64(text.utf8.count)) + Array(text.utf8)
        case .array(let values): head(4, UInt64(values.count)) + values.flatMap(encode)
        case .map(let pairs): head(5, UInt64(pairs.count)) + pairs.flatMap { encode($0.0) + encode($0.1) }
        }
    }

    static func head(_ major: UInt8, _ argument: UInt64) -> [UInt8] {
        let type = major << 5
        switch argument {
        case 0..<24: return [type | UInt8(argument)]
        case 24..<256: return [type | 24, UInt8(argument)]
        case 256..<65_536: return [type | 25, UInt8(argument >> 8), UInt8(argument & 0xff)]
        case 65_536...UInt64(UInt32.max): return [type | 26] + (0..<4).reversed().map { UInt8(argument >> (8 * UInt64($0)) & 0xff) }
        default: return [type | 27] + (0..<8).reversed().map { UInt8(argument >> (8 * UInt64($0)) & 0xff) }
        }
    }
}
