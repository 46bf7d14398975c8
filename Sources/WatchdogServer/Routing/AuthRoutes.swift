import Foundation
import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// Sign-in and sign-out of the dashboard.
struct AuthRoutes: Sendable {
    let authenticator: Authenticator
    let store: any TelemetryStore
    /// `ServerSettings.cookieSecure`.
    let cookieSecure: Bool
    /// Sign-ins and failed sign-ins are rows of the audit log.
    let audit: AuditLog
    let trustedProxies: Set<String>

    private var sessions: DashboardSessions { authenticator.sessions }

    /// `POST /v1/auth/login {"token": "wdv_…"}`: a session cookie for a viewer or admin token.
    func login(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        // Login CSRF: another site's plain form cannot send JSON, and a browser says where a
        // request comes from.
        guard request.headers["content-type"]?.lowercased().hasPrefix("application/json") == true else {
            throw .unsupportedMediaType(request.headers["content-type"] ?? "(none)")
        }
        if let site = request.headers["sec-fetch-site"], site != "same-origin", site != "none" {
            throw .forbidden("sign-in must come from the dashboard itself (Sec-Fetch-Site: \(site.prefix(20)))")
        }
        guard case .object(let fields)? = JSONValue.parse(request.body), case .string(let token)? = fields["token"] else {
            throw .badRequest("invalid_shape", "the body must be {\"token\": \"<viewer or admin token>\"}")
        }
        var bearer = request
        // Only the token, and the proxy's word on the client for the failed-auth budget.
        bearer.headers = HTTPHeaders([("Authorization", "Bearer \(token)")] + request.headers.fields.filter { $0.name == "x-forwarded-for" }.map { ($0.name, $0.value) })
        let address = IngestRoutes.client(of: request, trusting: trustedProxies)
        let principal: Principal
        do {
            principal = try authenticator.principal(for: bearer)
        } catch {
            if error.status == 401 { audit.record([audit.entry("signin.failed", app: nil, actor: "", address: address, after: .object(["method": .string("token")]))]) }
            throw error
        }
        guard let credential = try storeCall({ try store.credential(id: principal.credentialID) }) else { throw .unauthorized }
        let (cookie, session) = try audit.around(signIn(credential, method: "token", address: address)) { () throws(APIError) in try sessions.create(for: credential) }
        return JSONBody.response(Self.view(session), extraHeaders: [("Set-Cookie", SessionCookie.set(cookie, secure: cookieSecure))])
    }

    /// `GET /login?code=…[&next=/#/compare…]`: the page of a one-time link. It does not use the
    /// code up: chat apps and mail scanners fetch links to preview them, and would spend it. The
    /// page posts the code back (`/dashboard/sign-in-link.js` does at once; without scripts, a button).
    func loginPage(_ request: HTTPRequest) -> HTTPResponse {
        guard let code = request.query["code"], DashboardSessions.isLinkCode(code) else {
            return Self.page(status: 401, "This sign-in link is incomplete. Ask for a new one, or sign in with a token.")
        }
        let next = Self.dashboardPath(request.query["next"])
        let body = Self.shell(title: "Sign in", """
            <h1>Sign in</h1>\
            <form id=sign-in method=post action=/login><input type=hidden name=code value="\(code)">\
            <input type=hidden name=next value="\(Self.escape(next))"><p><button type=submit class=primary>Sign in to watchdogd</button></p></form>\
            <script src=/dashboard/sign-in-link.js></script>
            """)
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")] + SecurityHeaders.page,
                            body: Array(body.utf8))
    }

    /// `POST /login` (the page's form): uses the code up, sets the session cookie, goes on to `next`.
    func loginLink(_ request: HTTPRequest) -> HTTPResponse {
        guard request.headers["content-type"]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true else {
            return Self.page(status: 415, "Sign-in links are used from their own page.")
        }
        // Login CSRF: another site must not sign this browser in as someone else.
        if let site = request.headers["sec-fetch-site"] {
            guard site == "same-origin" || site == "none" else { return Self.page(status: 403, "Sign-in must come from watchdogd's own page.") }
        } else if let origin = request.headers["origin"], let host = request.headers["host"],
                  origin != "http://\(host)" && origin != "https://\(host)" {
            return Self.page(status: 403, "Sign-in must come from watchdogd's own page.")
        }
        let fields = Self.formFields(request.body)
        let address = IngestRoutes.client(of: request, trusting: trustedProxies)
        guard let code = fields["code"], let credential = try? sessions.consume(code: code),
              let (cookie, _) = try? audit.around(signIn(credential, method: "link", address: address), { () throws(APIError) in try sessions.create(for: credential) }) else {
            audit.record([audit.entry("signin.failed", app: nil, actor: "", address: address, after: .object(["method": .string("link")]))])
            return Self.page(status: 401, "This sign-in link has expired or was already used. Ask for a new one, or sign in with a token.")
        }
        return HTTPResponse(status: 303, headers: [("Location", Self.dashboardPath(fields["next"])), ("Set-Cookie", SessionCookie.set(cookie, secure: cookieSecure)), ("Cache-Control", "no-store")]
                            + SecurityHeaders.page)
    }

    /// The audit row of a sign-in (written with its session).
    private func signIn(_ credential: CredentialRecord, method: String, address: String) -> AuditEntry {
        audit.entry("signin", app: nil, actor: credential.name, address: address,
                    after: .object(["method": .string(method), "role": .string(credential.role.rawValue), "credential": .string(credential.id)]))
    }

    /// Only the dashboard's own pages (`/` or `/#/…`), printable ASCII: never an open redirect
    /// (browsers drop tabs and newlines, so `/\t/evil` would become `//evil`).
    private static func dashboardPath(_ next: String?) -> String {
        guard let next, next == "/" || next.hasPrefix("/#/"), !next.utf8.contains(where: { $0 < 0x21 || $0 >= 0x7F || $0 == 0x5C }) else { return "/" }
        return next
    }

    /// `application/x-www-form-urlencoded` fields (`+` is a space); undecodable ones are skipped.
    private static func formFields(_ body: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String? { String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let name = decode(parts[0]), let value = parts.count > 1 ? decode(parts[1]) : "" else { continue }
            fields[name] = value
        }
        return fields
    }

    /// `GET /v1/auth/session`: who the page is signed in as, and its CSRF token.
    /// (The contract's Session has role viewer or admin: the route is `.viewer`.)
    func current(_ principal: Principal) throws(APIError) -> HTTPResponse {
        return JSONBody.response(Self.view(principal))
    }

    /// `POST /v1/auth/logout`.
    func logout(_ principal: Principal) throws(APIError) -> HTTPResponse {
        guard principal.sessionHash != nil else {
            throw APIError(status: 401, code: "unauthorized", message: "sign-out ends the dashboard session: send its cookie, not a bearer token")
        }
        sessions.end(principal)
        return HTTPResponse(status: 204, headers: [("Set-Cookie", SessionCookie.clear), ("Cache-Control", "no-store")])
    }

    /// `POST /v1/auth/links`: a one-time sign-in link for the caller's own credential.
    func createLink(_ principal: Principal) throws(APIError) -> HTTPResponse {
        // A session must not mint links that outlive it (a stolen cookie renewing itself).
        guard principal.csrfToken == nil else { throw .forbidden("sign-in links are made with a bearer token, not from a dashboard session") }
        let (path, expires) = try sessions.link(for: principal.credentialID)
        return JSONBody.response(status: 201, SignInLinkView(path: path, expiresAt: Timestamp.format(milliseconds: expires)))
    }

    private static func view(_ principal: Principal) -> SessionView {
        SessionView(role: principal.role.rawValue, name: principal.name, csrfToken: principal.csrfToken, apps: principal.apps)
    }

    /// Text for HTML, also inside a quoted attribute.
    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "'", with: "&#39;")
    }

    /// Why a sign-in link did not sign in, on a page like the dashboard's, with the way on.
    static func page(status: Int, _ message: String, title: String = "Sign-in link") -> HTTPResponse {
        let body = shell(title: title, "<h1>\(title)</h1><p class=error>\(escape(message))</p><p><a href=\"/\">Sign in with a token</a></p>")
        return HTTPResponse(status: status, headers: [("Content-Type", "text/html; charset=utf-8")] + SecurityHeaders.page, body: Array(body.utf8))
    }

    /// The pages of sign-in links are not the dashboard's single page, but look like it: its
    /// stylesheet and icon, the brand in the header, the content in one card.
    private static func shell(title: String, _ content: String) -> String {
        """
        <!doctype html><html lang=en><meta charset=utf-8><meta name=viewport content="width=device-width, initial-scale=1">\
        <title>\(title) · watchdogd</title><link rel=icon href=/dashboard/icon.svg type=image/svg+xml>\
        <link rel=stylesheet href=/dashboard/style.css>\
        <header><strong class=brand>watchdogd</strong></header><main><div class=card>\(content)</div></main>
        """
    }
}

/// Headers every page and asset carries: a Content-Security-Policy without `unsafe-inline`
/// (no inline script or style can run, whatever a report contains), no framing, no sniffing.
enum SecurityHeaders {
    static let page: [(name: String, value: String)] = [
        ("Content-Security-Policy",
         "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "no-referrer"),
    ]
}

/// `GET /v1/auth/session`, `POST /v1/auth/login`.
struct SessionView: Encodable {
    var role: String
    var name: String
    @NullWhenAbsent var csrfToken: String? = nil
    /// The apps the caller is limited to; `null` for every app.
    @NullWhenAbsent var apps: [String]? = nil

    enum CodingKeys: String, CodingKey {
        case role, name, apps
        case csrfToken = "csrf_token"
    }
}

/// `POST /v1/auth/links`.
struct SignInLinkView: Encodable {
    var path: String
    var expiresAt: String

    enum CodingKeys: String, CodingKey {
        case path
        case expiresAt = "expires_at"
    }
}
