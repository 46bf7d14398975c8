import Crypto
import Foundation
import Testing
import WatchdogStore
import WatchdogTesting
@testable import WatchdogServer

/// `GET /auth/oidc/start`: the browser goes to the provider with a fresh state, nonce and PKCE
/// S256 challenge, whose verifier, state and nonce only its own `wd_oidc` cookie holds. The
/// provider's discovery document is served over real HTTP on loopback.
@Suite struct OIDCStartTests {
    static func app(issuer: String) throws -> TestApplication {
        try TestApplication { settings in
            settings.oidcIssuer = issuer
            settings.oidcClientID = "watchdog"
            settings.oidcRoles = [OIDCRoleRule("group:sre=admin")!]
            settings.oidcProviderName = "Acme SSO"
        }
    }

    static func query(_ url: String) -> [String: String] {
        Dictionary(URLComponents(string: url)?.queryItems?.map { ($0.name, $0.value ?? "") } ?? [], uniquingKeysWith: { $1 })
    }

    @Test func theBrowserGoesToTheProviderWithAnS256ChallengeItsCookieAloneCanAnswer() throws {
        let publisher = try JWKSRefetchTests.Publisher()
        let app = try Self.app(issuer: publisher.issuer)
        let summary = try app.client.request("GET", "/v1/auth/oidc")
        #expect(summary.json["enabled"] as? Bool == true && summary.json["name"] as? String == "Acme SSO")

        let first = try app.client.request("GET", "/auth/oidc/start", headers: ["Host": "watchdog.test"])
        #expect(first.status == 302)
        let location = try #require(first.headers["location"])
        #expect(location.hasPrefix(publisher.issuer + "/authorize?"))
        let query = Self.query(location)
        #expect(query["response_type"] == "code" && query["client_id"] == "watchdog")
        #expect(query["redirect_uri"] == "http://watchdog.test/auth/oidc/callback")
        #expect(query["scope"] == "openid email profile")
        let cookie = try #require(first.headers["set-cookie"])
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax") && cookie.contains("Path=/auth/oidc"))
        let flow = try #require(OIDCFlowCookie(cookieHeader: String(cookie.split(separator: ";")[0])))
        #expect(query["state"] == flow.state && query["nonce"] == flow.nonce)
        // RFC 7636 4.2, computed here: BASE64URL(SHA256(verifier)), no padding.
        let challenge = Data(SHA256.hash(data: Data(flow.verifier.utf8))).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        #expect(query["code_challenge_method"] == "S256" && query["code_challenge"] == challenge)
        #expect(!location.contains(flow.verifier))

        let second = try app.client.request("GET", "/auth/oidc/start", headers: ["Host": "watchdog.test"])
        let again = try #require(OIDCFlowCookie(cookieHeader: second.headers["set-cookie"].map { String($0.split(separator: ";")[0]) }))
        #expect(again.state != flow.state && again.nonce != flow.nonce && again.verifier != flow.verifier)
    }

    @Test func aProviderThatCannotBeReachedIsSaidAndAudited() throws {
        // A port nothing listens on: the publisher's, once it stopped.
        let issuer = try JWKSRefetchTests.Publisher().issuer
        let app = try Self.app(issuer: issuer)
        let response = try app.client.request("GET", "/auth/oidc/start", headers: ["Host": "watchdog.test"])
        #expect(response.status == 502)
        #expect(response.text.contains("Acme SSO cannot be reached"))
        #expect(response.headers["set-cookie"] == nil)
        let rows = try app.store.auditEntries(AuditFilter(action: "signin.failed"), before: nil, limit: 10)
        #expect(rows.count == 1 && rows[0].after?.contains("oidc") == true)
    }

    @Test func withoutAProviderTheRoutesSayThereIsNone() throws {
        let app = try TestApplication()
        #expect(try app.client.request("GET", "/v1/auth/oidc").json["enabled"] as? Bool == false)
        #expect(try app.client.request("GET", "/auth/oidc/start").status == 404)
        #expect(try app.client.request("GET", "/auth/oidc/callback?code=x&state=y").status == 404)
    }
}
