import Foundation
import JWTKit
import Testing
@testable import WatchdogServer

/// The ID token decisions, on tokens really signed by jwt-kit (ES256 keys made per test), in
/// plain Swift: no network, no provider. The browser flow against a real provider is
/// Tests/OIDC (run.sh).
@Suite struct IDTokenVerifierTests {
    static let issuer = "https://idp.example.com/realms/acme"
    static let client = "watchdog"
    static let nonce = String(repeating: "ab", count: 32)
    /// Any second: the checks compare with `now`, never with the wall clock.
    static let now: Double = 1_900_000_000

    struct Keys {
        let signer = JWTKeyCollection()
        let key = ES256PrivateKey()
        let kid: String

        init(kid: String = "k1") async {
            self.kid = kid
            await signer.add(ecdsa: key, kid: JWKIdentifier(string: kid))
        }

        /// The JWKS a provider would publish for this key.
        var jwks: [UInt8] {
            let parameters = key.publicKey.parameters!
            func url(_ base64: String) -> String {
                base64.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            }
            let json = #"{"keys":[{"kty":"EC","crv":"P-256","alg":"ES256","use":"sig","kid":"\#(kid)","x":"\#(url(parameters.x))","y":"\#(url(parameters.y))"}]}"#
            return Array(json.utf8)
        }

        func sign(_ claims: [String: IDTokenClaims.Value]) async throws -> String {
            try await signer.sign(IDTokenClaims(claims), kid: JWKIdentifier(string: kid))
        }
    }

    static func claims(_ changes: [String: IDTokenClaims.Value?] = [:]) -> [String: IDTokenClaims.Value] {
        var claims: [String: IDTokenClaims.Value] = [
            "iss": .string(issuer), "sub": .string("248289761001"), "aud": .string(client), "exp": .number(now + 300),
            "iat": .number(now - 5), "nonce": .string(nonce), "email": .string("jane@example.com"), "groups": .strings(["sre"]),
        ]
        for (name, value) in changes { claims[name] = value }
        return claims
    }

    static func expectation(now: Double = now) -> IDTokenVerifier.Expectation {
        IDTokenVerifier.Expectation(issuer: issuer, clientID: client, nonce: nonce, now: now)
    }

    func verdict(_ claims: [String: IDTokenClaims.Value], signedBy keys: Keys, checkedWith published: Keys? = nil,
                 now: Double = IDTokenVerifierTests.now) async throws -> IDTokenRefusal? {
        let token = try await keys.sign(claims)
        let set = try await OIDCKeySet.parse((published ?? keys).jwks)
        do {
            _ = try await IDTokenVerifier.verify(token, keys: set, expecting: Self.expectation(now: now))
            return nil
        } catch {
            return error
        }
    }

    @Test func aTokenSignedByThePublishedKeyWithTheRightClaimsPasses() async throws {
        let keys = await Keys()
        let token = try await keys.sign(Self.claims())
        let verified = try await IDTokenVerifier.verify(token, keys: try await OIDCKeySet.parse(keys.jwks), expecting: Self.expectation())
        #expect(verified.string("sub") == "248289761001")
        #expect(verified.strings("groups") == ["sre"])
    }

    @Test func anotherIssuerIsRefused() async throws {
        #expect(try await verdict(Self.claims(["iss": .string("https://idp.example.com/realms/other")]), signedBy: Keys()) == .wrongIssuer("https://idp.example.com/realms/other"))
        #expect(try await verdict(Self.claims(["iss": nil]), signedBy: Keys()) == .wrongIssuer(""))
    }

    @Test func aTokenForAnotherClientIsRefused() async throws {
        #expect(try await verdict(Self.claims(["aud": .string("another-client")]), signedBy: Keys()) == .wrongAudience)
        #expect(try await verdict(Self.claims(["aud": .strings(["another-client", "third"])]), signedBy: Keys()) == .wrongAudience)
    }

    @Test func severalAudiencesNeedThisClientAsAuthorizedParty() async throws {
        let both: IDTokenClaims.Value = .strings([Self.client, "another-client"])
        #expect(try await verdict(Self.claims(["aud": both]), signedBy: Keys()) == .wrongAuthorizedParty)
        #expect(try await verdict(Self.claims(["aud": both, "azp": .string("another-client")]), signedBy: Keys()) == .wrongAuthorizedParty)
        #expect(try await verdict(Self.claims(["aud": both, "azp": .string(Self.client)]), signedBy: Keys()) == nil)
    }

    @Test func anExpiredTokenIsRefusedPastTheLeewayOnly() async throws {
        #expect(try await verdict(Self.claims(["exp": .number(Self.now - 61)]), signedBy: Keys()) == .expired)
        #expect(try await verdict(Self.claims(["exp": .number(Self.now - 30)]), signedBy: Keys()) == nil)
        #expect(try await verdict(Self.claims(["exp": nil]), signedBy: Keys()) == .expired)
    }

    @Test func aTokenIssuedInTheFutureOrLongAgoIsRefused() async throws {
        #expect(try await verdict(Self.claims(["iat": .number(Self.now + 120)]), signedBy: Keys()) == .issuedInTheFuture)
        #expect(try await verdict(Self.claims(["iat": .number(Self.now + 30)]), signedBy: Keys()) == nil)
        #expect(try await verdict(Self.claims(["iat": .number(Self.now - 7_200), "exp": .number(Self.now + 60)]), signedBy: Keys()) == .tooOld)
    }

    @Test func anotherSignInsNonceIsRefused() async throws {
        #expect(try await verdict(Self.claims(["nonce": .string(String(repeating: "cd", count: 32))]), signedBy: Keys()) == .nonceMismatch)
        #expect(try await verdict(Self.claims(["nonce": nil]), signedBy: Keys()) == .nonceMismatch)
    }

    @Test func aSignatureByAKeyNotPublishedUnderTheSameKidIsRefused() async throws {
        #expect(try await verdict(Self.claims(), signedBy: Keys(kid: "k1"), checkedWith: Keys(kid: "k1")) == .badSignature)
    }

    @Test func aKidTheJWKSDoesNotListIsUnknown() async throws {
        #expect(try await verdict(Self.claims(), signedBy: Keys(kid: "k2"), checkedWith: Keys(kid: "k1")) == .unknownKey("k2"))
    }

    @Test func aChangedPayloadUnderTheOriginalSignatureIsRefused() async throws {
        let keys = await Keys()
        let parts = try await keys.sign(Self.claims()).split(separator: ".")
        let forged = try JSONEncoder().encode(IDTokenClaims(Self.claims(["email": .string("admin@example.com")])))
        let payload = forged.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let token = "\(parts[0]).\(payload).\(parts[2])"
        await #expect(throws: IDTokenRefusal.badSignature) {
            try await IDTokenVerifier.verify(token, keys: try await OIDCKeySet.parse(keys.jwks), expecting: Self.expectation())
        }
    }

    @Test func unsignedAndSymmetricTokensAreRefusedBeforeAnyKey() throws {
        func token(alg: String) -> String {
            let header = Data(#"{"alg":"\#(alg)","kid":"k1"}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
            return "\(header).e30."
        }
        #expect(throws: IDTokenRefusal.algorithm("none")) { try IDTokenVerifier.header(of: token(alg: "none")) }
        #expect(throws: IDTokenRefusal.algorithm("HS256")) { try IDTokenVerifier.header(of: token(alg: "HS256")) }
        #expect(throws: IDTokenRefusal.malformed) { try IDTokenVerifier.header(of: "not-a-jwt") }
    }
}

@Suite struct OIDCRoleMappingTests {
    static let rules = ["group:sre=admin", "group:mail-team=operator:com.example.mail", "group:cal-team=operator:com.example.cal",
                        "domain:example.com=viewer"].compactMap(OIDCRoleRule.init)

    @Test func rulesParseAndMalformedOnesAreRefused() {
        #expect(Self.rules.count == 4)
        #expect(Self.rules[1].apps == ["com.example.mail"])
        #expect(Self.rules[1].description == "group:mail-team=operator:com.example.mail")
        for bad in ["group:x=ingest", "group:=admin", "team:x=admin", "group:x=root", "domain:a@b.com=viewer", "group:x=viewer:bad app", "group:x=viewer:"] {
            #expect(OIDCRoleRule(bad) == nil, "\(bad)")
        }
    }

    @Test func theHighestMatchingRoleWinsWithTheAppsOfItsRules() {
        #expect(OIDCRoleMapping.grant(rules: Self.rules, groups: ["sre", "mail-team"], email: nil, emailVerified: false)! == (.admin, nil))
        let operatorGrant = OIDCRoleMapping.grant(rules: Self.rules, groups: ["mail-team", "cal-team"], email: "a@example.com", emailVerified: true)!
        #expect(operatorGrant.role == .operator && operatorGrant.apps == ["com.example.cal", "com.example.mail"])
    }

    @Test func aDomainCountsOnlyForAVerifiedAddress() {
        #expect(OIDCRoleMapping.grant(rules: Self.rules, groups: [], email: "jane@EXAMPLE.com", emailVerified: true)! == (.viewer, nil))
        #expect(OIDCRoleMapping.grant(rules: Self.rules, groups: [], email: "jane@example.com", emailVerified: false) == nil)
        #expect(OIDCRoleMapping.grant(rules: Self.rules, groups: ["other"], email: "jane@example.org", emailVerified: true) == nil)
    }
}
