import Foundation
import Locking

/// What `watchdogd serve --oidc-…` configured, checked at start.
struct OIDCConfiguration: Sendable {
    var issuer: String
    var clientID: String
    /// `nil`: a public client (PKCE alone).
    var clientSecret: String?
    var rules: [OIDCRoleRule]
    var groupsClaim: String
    var providerName: String
    var redirectURI: String?
    var scopes: [String]
    var jwksRefetchMilliseconds: Int64

    /// The configuration of `settings`, `nil` when no issuer is set; throws what is missing or wrong.
    static func from(_ settings: ServerSettings) throws(SettingsError) -> OIDCConfiguration? {
        guard let issuer = settings.oidcIssuer else {
            if settings.oidcClientID != nil || !settings.oidcRoles.isEmpty {
                throw SettingsError("--oidc-client-id and --oidc-role need --oidc-issuer")
            }
            return nil
        }
        guard OIDCHTTP.isAcceptable(issuer) else {
            throw SettingsError("--oidc-issuer must be an https URL (http only on loopback), got \(issuer.prefix(200).debugDescription)")
        }
        guard let clientID = settings.oidcClientID, !clientID.isEmpty, clientID.utf8.count <= 255 else {
            throw SettingsError("--oidc-issuer needs --oidc-client-id (1–255 characters)")
        }
        guard !settings.oidcRoles.isEmpty else {
            throw SettingsError("--oidc-issuer needs at least one --oidc-role rule (group:NAME=ROLE or domain:DOMAIN=ROLE): otherwise nobody could sign in")
        }
        var secret: String?
        if let path = settings.oidcClientSecretFile {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw SettingsError("--oidc-client-secret-file: cannot read \(path)")
            }
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty, trimmed.utf8.count <= 4_096 else { throw SettingsError("--oidc-client-secret-file: \(path) holds no secret") }
            secret = trimmed
        }
        if let redirect = settings.oidcRedirectURI, URLComponents(string: redirect)?.host == nil || !(redirect.hasPrefix("https://") || redirect.hasPrefix("http://")) {
            throw SettingsError("--oidc-redirect-uri must be an absolute http(s) URL, got \(redirect.prefix(200).debugDescription)")
        }
        let name = settings.oidcProviderName ?? URLComponents(string: issuer)?.host ?? "your identity provider"
        return OIDCConfiguration(issuer: issuer, clientID: clientID, clientSecret: secret, rules: settings.oidcRoles, groupsClaim: settings.oidcGroupsClaim,
                                 providerName: String(name.prefix(80)), redirectURI: settings.oidcRedirectURI, scopes: settings.oidcScopes,
                                 jwksRefetchMilliseconds: Int64(settings.oidcJWKSRefetchSeconds) * 1_000)
    }
}

/// The identity provider: its discovery document (kept an hour), its keys (fetched again when
/// a token names a key not seen, at most once per `jwksRefetchMilliseconds`), its token endpoint.
final class OIDCProvider: Sendable {
    struct Discovery: Sendable {
        var authorizationEndpoint: String
        var tokenEndpoint: String
        var jwksURI: String
    }

    let configuration: OIDCConfiguration
    private let clock: @Sendable () -> Int64
    private let discovered = Locked<(Discovery, Int64)?>(nil)
    private let keys = Locked<(OIDCKeySet, Int64)?>(nil)
    static let discoveryLifetimeMilliseconds: Int64 = 3_600_000

    init(configuration: OIDCConfiguration, clock: @escaping @Sendable () -> Int64) {
        self.configuration = configuration
        self.clock = clock
    }

    /// The discovery document (OpenID Connect Discovery 1.0), from the cache or the provider.
    func discovery() throws(OIDCFailure) -> Discovery {
        let now = clock()
        if let (cached, at) = discovered.withLock({ $0 }), now - at < Self.discoveryLifetimeMilliseconds { return cached }
        let base = configuration.issuer.hasSuffix("/") ? String(configuration.issuer.dropLast()) : configuration.issuer
        let url = base + "/.well-known/openid-configuration"
        let answer = try OIDCHTTP.send(url)
        guard answer.status == 200 else { throw .provider("the provider's discovery document \(url) answered \(answer.status)") }
        let document = try OIDCHTTP.json(answer.body, from: "discovery document")
        // Discovery 4.3: the document is the issuer's own.
        guard document["issuer"] as? String == configuration.issuer else {
            throw .provider("the discovery document names issuer \(String(describing: document["issuer"] ?? "nothing").prefix(200)), not \(configuration.issuer)")
        }
        guard let authorization = document["authorization_endpoint"] as? String, OIDCHTTP.isAcceptable(authorization),
              let token = document["token_endpoint"] as? String, OIDCHTTP.isAcceptable(token),
              let jwks = document["jwks_uri"] as? String, OIDCHTTP.isAcceptable(jwks) else {
            throw .provider("the discovery document lacks an https authorization_endpoint, token_endpoint or jwks_uri")
        }
        if let methods = document["code_challenge_methods_supported"] as? [String], !methods.contains("S256") {
            throw .provider("the provider does not support PKCE with S256")
        }
        let discovery = Discovery(authorizationEndpoint: authorization, tokenEndpoint: token, jwksURI: jwks)
        discovered.withLock { $0 = (discovery, now) }
        return discovery
    }

    /// The provider's keys; `refresh` fetches them again unless they were fetched less than
    /// `jwksRefetchMilliseconds` ago (then `nil`: nothing new to try).
    private func keySet(refresh: Bool) async throws(OIDCFailure) -> OIDCKeySet? {
        let now = clock()
        if let (cached, at) = keys.withLock({ $0 }) {
            if !refresh { return cached }
            if now - at < configuration.jwksRefetchMilliseconds { return nil }
        }
        let url = try discovery().jwksURI
        let answer = try OIDCHTTP.send(url)
        guard answer.status == 200 else { throw .provider("the provider's JWKS \(url) answered \(answer.status)") }
        let set = try await OIDCKeySet.parse(answer.body)
        keys.withLock { $0 = (set, now) }
        return set
    }

    /// The verified claims of an ID token; a key not in the JWKS makes it fetched again once.
    func verify(idToken: String, nonce: String) async throws(OIDCFailure) -> IDTokenClaims {
        let expectation = IDTokenVerifier.Expectation(issuer: configuration.issuer, clientID: configuration.clientID, nonce: nonce,
                                                      now: Double(clock()) / 1_000)
        guard let current = try await keySet(refresh: false) else { throw .provider("no keys") }
        do {
            return try await IDTokenVerifier.verify(idToken, keys: current, expecting: expectation)
        } catch .unknownKey(let kid) {
            guard let fresh = try await keySet(refresh: true) else { throw .token(.unknownKey(kid)) }
            do {
                return try await IDTokenVerifier.verify(idToken, keys: fresh, expecting: expectation)
            } catch {
                throw .token(error)
            }
        } catch {
            throw .token(error)
        }
    }

    /// Trades an authorization code (and its PKCE verifier) for the provider's ID token.
    func exchange(code: String, verifier: String, redirectURI: String) throws(OIDCFailure) -> String {
        let endpoint = try discovery().tokenEndpoint
        var form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("code_verifier", verifier)]
        var headers: [String] = []
        if let secret = configuration.clientSecret {
            // client_secret_basic (RFC 6749 2.3.1): each part form-encoded first.
            let pair = "\(OIDCHTTP.formComponent(configuration.clientID)):\(OIDCHTTP.formComponent(secret))"
            headers.append("Authorization: Basic \(Data(pair.utf8).base64EncodedString())")
        } else {
            form.append(("client_id", configuration.clientID))
        }
        let answer = try OIDCHTTP.send(endpoint, headers: headers, form: form)
        let document = try OIDCHTTP.json(answer.body, from: "token answer")
        guard answer.status == 200 else {
            let error = (document["error"] as? String).map { String($0.prefix(100)) } ?? "status \(answer.status)"
            throw .provider("the provider refused the code: \(error)")
        }
        guard let idToken = document["id_token"] as? String else { throw .provider("the provider's token answer has no id_token") }
        return idToken
    }
}
