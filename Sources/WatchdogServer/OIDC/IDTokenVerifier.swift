import Foundation
import JWTKit

/// The claims of an ID token, as the provider sent them: strings, numbers, booleans and lists
/// of strings, by name (other shapes are dropped). Decoded by jwt-kit only after the signature
/// checked out; `IDTokenVerifier.check` then decides.
struct IDTokenClaims: JWTPayload, Equatable {
    enum Value: Sendable, Equatable, Codable {
        case string(String)
        case number(Double)
        case bool(Bool)
        case strings([String])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) { self = .string(text) }
            else if let flag = try? container.decode(Bool.self) { self = .bool(flag) }
            else if let number = try? container.decode(Double.self) { self = .number(number) }
            else if let list = try? container.decode([String].self) { self = .strings(Array(list.prefix(1_000))) }
            else { throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a claim watchdogd reads") }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let text): try container.encode(text)
            case .number(let number): try container.encode(number)
            case .bool(let flag): try container.encode(flag)
            case .strings(let list): try container.encode(list)
            }
        }
    }

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    var values: [String: Value]

    init(_ values: [String: Value]) {
        self.values = values
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        var values: [String: Value] = [:]
        for key in container.allKeys.prefix(200) {
            if let value = try? container.decode(Value.self, forKey: key) { values[key.stringValue] = value }
        }
        self.values = values
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (name, value) in values { try container.encode(value, forKey: Key(stringValue: name)) }
    }

    /// The decisions are `IDTokenVerifier.check`'s, written out, not jwt-kit's claim types.
    func verify(using algorithm: some JWTAlgorithm) async throws {}

    func string(_ name: String) -> String? {
        if case .string(let text)? = values[name] { return text }
        return nil
    }

    func number(_ name: String) -> Double? {
        if case .number(let number)? = values[name] { return number }
        return nil
    }

    /// A list claim; a single string counts as a list of one.
    func strings(_ name: String) -> [String] {
        switch values[name] {
        case .strings(let list)?: return list
        case .string(let text)?: return [text]
        default: return []
        }
    }

    /// `email_verified`, which some providers send as the string "true".
    func flag(_ name: String) -> Bool {
        switch values[name] {
        case .bool(let flag)?: return flag
        case .string(let text)?: return text == "true"
        default: return false
        }
    }
}

/// Why an ID token was refused: each is a sign-in refused with its own words in the audit log.
enum IDTokenRefusal: Error, Equatable, CustomStringConvertible {
    case malformed
    case algorithm(String)
    case unknownKey(String)
    case badSignature
    case wrongIssuer(String)
    case wrongAudience
    case wrongAuthorizedParty
    case expired
    case issuedInTheFuture
    case tooOld
    case nonceMismatch
    case noSubject

    var description: String {
        switch self {
        case .malformed: return "the ID token is not a signed JWT"
        case .algorithm(let alg): return "the ID token is signed with \(alg.prefix(20).debugDescription), not an asymmetric algorithm watchdogd accepts"
        case .unknownKey(let kid): return "the ID token's key \(kid.prefix(80).debugDescription) is not in the provider's JWKS"
        case .badSignature: return "the ID token's signature does not verify"
        case .wrongIssuer(let issuer): return "the ID token is from issuer \(issuer.prefix(200).debugDescription), not the configured one"
        case .wrongAudience: return "the ID token is not meant for this client (aud)"
        case .wrongAuthorizedParty: return "the ID token's authorized party (azp) is another client"
        case .expired: return "the ID token has expired"
        case .issuedInTheFuture: return "the ID token is issued in the future"
        case .tooOld: return "the ID token was issued too long ago"
        case .nonceMismatch: return "the ID token's nonce is not this sign-in's"
        case .noSubject: return "the ID token names no subject"
        }
    }
}

/// Checks an ID token: its signature with jwt-kit against the provider's keys, then the claims
/// (OpenID Connect Core 3.1.3.7): issuer, audience and authorized party, expiry and issue time
/// with a small leeway, nonce, subject.
enum IDTokenVerifier {
    /// What the token must say.
    struct Expectation: Sendable {
        var issuer: String
        var clientID: String
        var nonce: String
        /// Seconds since 1970.
        var now: Double
        /// Clock skew tolerated on `exp` and `iat`, seconds.
        var leeway: Double = 60
        /// How old `iat` may be, seconds (a sign-in is completed within minutes).
        var maxAge: Double = 3_600
    }

    /// Asymmetric algorithms only: an HMAC "signature" would be keyed with the client secret,
    /// and `none` is no signature.
    static let algorithms: Set<String> = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]

    /// The header's `alg` and `kid` (decoded as data; nothing is trusted before the signature).
    static func header(of token: String) throws(IDTokenRefusal) -> (alg: String, kid: String?) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count <= 64 * 1024, parts.count == 3, let data = base64URL(parts[0]),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { throw .malformed }
        guard let alg = object["alg"] as? String else { throw .malformed }
        guard algorithms.contains(alg) else { throw .algorithm(alg) }
        return (alg, object["kid"] as? String)
    }

    static func base64URL(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.utf8.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }

    /// The verified claims of `token` under `keys`, or why not.
    static func verify(_ token: String, keys: OIDCKeySet, expecting expectation: Expectation) async throws(IDTokenRefusal) -> IDTokenClaims {
        let header = try header(of: token)
        if let kid = header.kid, !keys.identifiers.contains(kid) { throw .unknownKey(kid) }
        let claims: IDTokenClaims
        do {
            claims = try await keys.collection.verify(token, as: IDTokenClaims.self, iteratingKeys: header.kid == nil)
        } catch {
            throw .badSignature
        }
        try check(claims, expecting: expectation)
        return claims
    }

    /// The claim decisions, on claims whose signature checked out.
    static func check(_ claims: IDTokenClaims, expecting expectation: Expectation) throws(IDTokenRefusal) {
        guard let issuer = claims.string("iss"), issuer == expectation.issuer else { throw .wrongIssuer(claims.string("iss") ?? "") }
        let audiences = claims.strings("aud")
        guard audiences.contains(expectation.clientID) else { throw .wrongAudience }
        if let azp = claims.string("azp") {
            guard azp == expectation.clientID else { throw .wrongAuthorizedParty }
        } else if audiences.count > 1 {
            throw .wrongAuthorizedParty
        }
        guard let expires = claims.number("exp"), expectation.now < expires + expectation.leeway else { throw .expired }
        guard let issued = claims.number("iat") else { throw .malformed }
        guard issued <= expectation.now + expectation.leeway else { throw .issuedInTheFuture }
        guard issued >= expectation.now - expectation.maxAge - expectation.leeway else { throw .tooOld }
        guard let nonce = claims.string("nonce"), constantTimeEquals(Array(nonce.utf8), Array(expectation.nonce.utf8)) else { throw .nonceMismatch }
        guard let subject = claims.string("sub"), !subject.isEmpty, subject.utf8.count <= 255 else { throw .noSubject }
    }
}

/// A provider's published keys (its JWKS), ready for jwt-kit.
struct OIDCKeySet: Sendable {
    let collection: JWTKeyCollection
    /// The `kid`s the JWKS lists.
    let identifiers: Set<String>

    /// The keys of a JWKS document; keys jwt-kit cannot use (encryption keys, unknown types) are
    /// skipped. Throws when none is left.
    static func parse(_ json: [UInt8]) async throws(OIDCFailure) -> OIDCKeySet {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any], let keys = object["keys"] as? [Any] else {
            throw .provider("the provider's JWKS is not a JSON Web Key Set")
        }
        let collection = JWTKeyCollection()
        var identifiers: Set<String> = []
        var added = 0
        for entry in keys.prefix(100) {
            guard let data = try? JSONSerialization.data(withJSONObject: entry), let key = try? JSONDecoder().decode(JWK.self, from: data) else { continue }
            do {
                try await collection.add(jwk: key)
                added += 1
                if let kid = key.keyIdentifier?.string { identifiers.insert(kid) }
            } catch {
                continue
            }
        }
        guard added > 0 else { throw .provider("the provider's JWKS holds no key watchdogd can use") }
        return OIDCKeySet(collection: collection, identifiers: identifiers)
    }
}
