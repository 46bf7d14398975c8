import Crypto
import Dispatch
import Foundation
import Locking
import WatchdogHTTP
import WatchdogStore

/// Sign-in to the dashboard with the company's OpenID provider: the authorization code flow
/// with PKCE (S256), `state` and `nonce` (OpenID Connect Core 3.1).
///
/// `GET /auth/oidc/start` sends the browser to the provider with a fresh state, nonce and PKCE
/// challenge, and keeps them (and the verifier) in a short-lived `HttpOnly` cookie of this
/// browser. `GET /auth/oidc/callback` takes the code only with that browser's cookie and its
/// state, once; trades it at the token endpoint; checks the ID token (`IDTokenVerifier`); maps
/// the person's groups or e-mail domain to a role (`OIDCRoleMapping`); and starts a dashboard
/// session like a token's. Both run on a queue of their own: a slow provider holds no HTTP
/// worker, and each request to it ends within `OIDCHTTP.timeoutMilliseconds`.
final class OIDCSignIn: Sendable {
    let provider: OIDCProvider
    private let authenticator: Authenticator
    private var sessions: DashboardSessions { authenticator.sessions }
    private let store: any TelemetryStore
    private let audit: AuditLog
    private let cookieSecure: Bool
    private let trustedProxies: Set<String>
    private let clock: @Sendable () -> Int64
    private let queue = DispatchQueue(label: "wd-oidc", attributes: .concurrent)
    /// Sign-ins being handled: past `concurrencyLimit`, new ones get 503 at once.
    private let inFlight = Locked(0)
    static let concurrencyLimit = 8
    /// States already used on this node (with when they expire): a callback is taken once.
    private let usedStates = Locked<[String: Int64]>([:])
    /// How long a sign-in may take at the provider.
    static let flowLifetimeSeconds = 600

    init(provider: OIDCProvider, authenticator: Authenticator, store: any TelemetryStore, audit: AuditLog, cookieSecure: Bool,
         trustedProxies: Set<String>, clock: @escaping @Sendable () -> Int64) {
        self.provider = provider
        self.authenticator = authenticator
        self.store = store
        self.audit = audit
        self.cookieSecure = cookieSecure
        self.trustedProxies = trustedProxies
        self.clock = clock
    }

    /// Runs `work` on the sign-in queue; its page is the answer.
    func offload(_ work: @escaping @Sendable () -> HTTPResponse) -> PendingResponse {
        let pending = PendingResponse()
        let admitted = inFlight.withLock { count -> Bool in
            guard count < Self.concurrencyLimit else { return false }
            count += 1
            return true
        }
        guard admitted else {
            pending.respond(OIDCPages.page(status: 503, "Too many sign-ins are in progress. Try again in a moment.", extraHeaders: [("Retry-After", "5")]))
            return pending
        }
        queue.async { [inFlight] in
            let response = work()
            inFlight.withLock { $0 -= 1 }
            pending.respond(response)
        }
        return pending
    }

    /// `GET /auth/oidc/start`: to the provider's authorization endpoint.
    func start(_ request: HTTPRequest) -> HTTPResponse {
        let discovery: OIDCProvider.Discovery
        do {
            discovery = try provider.discovery()
        } catch {
            // Counted like a refusal: a flood of starts while the provider is down leaves a bounded trail.
            if (try? authenticator.countRefusedSignIn(address: address(of: request))) != nil {
                audit.record([audit.entry("signin.failed", app: nil, actor: "", address: address(of: request),
                                          after: .object(["method": .string("oidc"), "reason": .string(error.description)]))])
            }
            return OIDCPages.page(status: 502, "\(provider.configuration.providerName) cannot be reached: \(error.description)")
        }
        guard let redirectURI = redirectURI(for: request) else { return OIDCPages.page(status: 400, "The request names no valid Host.") }
        let flow = OIDCFlowCookie(state: RandomSecret.hex(bytes: 32), nonce: RandomSecret.hex(bytes: 32), verifier: RandomSecret.hex(bytes: 32))
        let challenge = Data(SHA256.hash(data: Array(flow.verifier.utf8))).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let query = OIDCHTTP.formEncoded([
            ("response_type", "code"), ("client_id", provider.configuration.clientID), ("redirect_uri", redirectURI),
            ("scope", (["openid"] + provider.configuration.scopes).joined(separator: " ")), ("state", flow.state), ("nonce", flow.nonce),
            ("code_challenge", challenge), ("code_challenge_method", "S256"),
        ])
        let separator = discovery.authorizationEndpoint.contains("?") ? "&" : "?"
        return HTTPResponse(status: 302, headers: [("Location", discovery.authorizationEndpoint + separator + query),
                                                   ("Set-Cookie", flow.setCookie(secure: cookieSecure, maxAge: Self.flowLifetimeSeconds)),
                                                   ("Cache-Control", "no-store")] + SecurityHeaders.page)
    }

    /// `GET /auth/oidc/callback?code=…&state=…`: the provider's answer, taken once.
    func callback(_ request: HTTPRequest) -> HTTPResponse {
        let address = address(of: request)
        let clear = ("Set-Cookie", OIDCFlowCookie.clear(secure: cookieSecure))
        func refuse(_ status: Int, _ reason: String, actor: String = "", page: String? = nil) -> HTTPResponse {
            do {
                try authenticator.countRefusedSignIn(address: address)
            } catch {
                return OIDCPages.page(status: error.status, "Too many refused sign-ins from this address: \(error.message).", extraHeaders: error.headers + [clear])
            }
            audit.record([audit.entry("signin.failed", app: nil, actor: actor, address: address,
                                      after: .object(["method": .string("oidc"), "reason": .string(reason)]))])
            return OIDCPages.page(status: status, page ?? "Sign-in with \(provider.configuration.providerName) failed: \(reason).", extraHeaders: [clear])
        }
        if let error = request.query["error"] {
            return refuse(401, "the provider answered \(String(error.prefix(64)).debugDescription)")
        }
        guard let state = request.query["state"], !state.isEmpty else { return refuse(400, "the answer carries no state") }
        guard let code = request.query["code"], !code.isEmpty, code.utf8.count <= 4_096 else { return refuse(400, "the answer carries no code") }
        guard let flow = OIDCFlowCookie(cookieHeader: request.headers["cookie"]) else {
            return refuse(400, "this browser started no sign-in (or it took over \(Self.flowLifetimeSeconds / 60) minutes)")
        }
        guard constantTimeEquals(Array(state.utf8), Array(flow.state.utf8)) else { return refuse(400, "the state is not the one this browser was sent with") }
        guard takeState(state) else { return refuse(400, "this sign-in answer was already used") }
        guard let redirectURI = redirectURI(for: request) else { return refuse(400, "the request names no valid Host") }
        let claims: IDTokenClaims
        do {
            let idToken = try provider.exchange(code: code, verifier: flow.verifier, redirectURI: redirectURI)
            let nonce = flow.nonce
            let provider = provider
            claims = try Self.wait { () async throws(OIDCFailure) -> IDTokenClaims in try await provider.verify(idToken: idToken, nonce: nonce) }
        } catch {
            return refuse(401, error.description)
        }
        let subject = claims.string("sub") ?? ""
        let email = claims.string("email")
        let actor = String((email.map { "\(subject) <\($0)>" } ?? subject).prefix(300))
        let configuration = provider.configuration
        guard let grant = OIDCRoleMapping.grant(rules: configuration.rules, groups: claims.strings(configuration.groupsClaim), email: email,
                                                emailVerified: claims.flag("email_verified")) else {
            return refuse(403, "no role for this person", actor: actor,
                          page: "You signed in with \(configuration.providerName) as \(email ?? subject), but no role in watchdogd is given to your groups or e-mail domain. Ask an admin to add a rule (--oidc-role).")
        }
        let issued = CredentialIssuer.issue(role: grant.role, app: nil, name: "oidc:\(actor)", nowMilliseconds: clock(), apps: grant.apps)
        let entry = audit.entry("signin", app: nil, actor: actor, address: address,
                                after: .object(["method": .string("oidc"), "role": .string(grant.role.rawValue), "credential": .string(issued.record.id),
                                                "subject": .string(subject), "email": email.map(JSONValue.string) ?? .null,
                                                "apps": grant.apps.map { .array($0.map(JSONValue.string)) } ?? .null]))
        let cookie: String
        do {
            // The person's credential: a role and apps, and a secret nobody is given (the
            // session is the only way in); `watchdogd tokens revoke` ends it.
            (cookie, _) = try audit.around(entry) { () throws(APIError) in
                try storeCall { try store.addCredential(issued.record) }
                return try sessions.create(for: issued.record)
            }
        } catch {
            return OIDCPages.page(status: error.status, "Sign-in could not be recorded: \(error.message)", extraHeaders: [clear])
        }
        return HTTPResponse(status: 303, headers: [("Location", "/"), ("Set-Cookie", SessionCookie.set(cookie, secure: cookieSecure)), clear,
                                                   ("Cache-Control", "no-store")] + SecurityHeaders.page)
    }

    /// `GET /v1/auth/oidc`: whether the sign-in page shows the provider's button.
    func summary() -> HTTPResponse {
        JSONBody.response(OIDCSummary(enabled: true, name: provider.configuration.providerName, start: "/auth/oidc/start"))
    }

    /// Marks `state` used; `false` if it was.
    private func takeState(_ state: String) -> Bool {
        let now = clock()
        return usedStates.withLock { used in
            if used.count > 10_000 { used = used.filter { $0.value > now } }
            if let expires = used[state], expires > now { return false }
            used[state] = now + Int64(Self.flowLifetimeSeconds) * 1_000
            return true
        }
    }

    private func address(of request: HTTPRequest) -> String {
        IngestRoutes.client(of: request, trusting: trustedProxies)
    }

    /// The configured redirect URI, else this server's own callback by the request's Host.
    private func redirectURI(for request: HTTPRequest) -> String? {
        if let configured = provider.configuration.redirectURI { return configured }
        guard let host = request.headers["host"], !host.isEmpty, host.utf8.count <= 255,
              host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x2F && $0 != 0x5C && $0 != 0x40 && $0 != 0x3F && $0 != 0x23 }) else { return nil }
        return "\(cookieSecure ? "https" : "http")://\(host)/auth/oidc/callback"
    }

    /// Waits, on this (non-cooperative) thread, for async work that never blocks.
    private static func wait<T: Sendable>(_ body: @escaping @Sendable () async throws(OIDCFailure) -> T) throws(OIDCFailure) -> T {
        let outcome = Locked<Result<T, OIDCFailure>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<T, OIDCFailure>
            do throws(OIDCFailure) { result = .success(try await body()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0 }!.get()
    }
}

/// `GET /v1/auth/oidc`.
struct OIDCSummary: Encodable {
    var enabled: Bool
    @NullWhenAbsent var name: String? = nil
    @NullWhenAbsent var start: String? = nil
}

/// The `wd_oidc` cookie: a sign-in under way in this browser — state, nonce and PKCE verifier,
/// random hex each. `SameSite=Lax`: the provider's redirect back is a navigation from another site.
struct OIDCFlowCookie: Equatable {
    static let name = "wd_oidc"
    var state: String
    var nonce: String
    var verifier: String

    init(state: String, nonce: String, verifier: String) {
        self.state = state
        self.nonce = nonce
        self.verifier = verifier
    }

    init?(cookieHeader: String?) {
        guard let header = cookieHeader else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: " ") == Self.name else { continue }
            let fields = pair[1].trimmingCharacters(in: " ").split(separator: ".").map(String.init)
            guard fields.count == 3, fields.allSatisfy({ $0.utf8.count == 64 && $0.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) } }) else { return nil }
            (state, nonce, verifier) = (fields[0], fields[1], fields[2])
            return
        }
        return nil
    }

    func setCookie(secure: Bool, maxAge: Int) -> String {
        "\(Self.name)=\(state).\(nonce).\(verifier); Path=/auth/oidc; HttpOnly; SameSite=Lax; Max-Age=\(maxAge)" + (secure ? "; Secure" : "")
    }

    static func clear(secure: Bool) -> String {
        "\(name)=; Path=/auth/oidc; HttpOnly; SameSite=Lax; Max-Age=0" + (secure ? "; Secure" : "")
    }
}

/// The sign-in pages of OpenID Connect: like a sign-in link's, with the way back.
enum OIDCPages {
    static func page(status: Int, _ message: String, extraHeaders: [(name: String, value: String)] = []) -> HTTPResponse {
        var response = AuthRoutes.page(status: status, message, title: "Sign-in")
        response.headers.append(contentsOf: extraHeaders)
        response.headers.append(("Cache-Control", "no-store"))
        return response
    }
}
