import Foundation
import Locking
import WatchdogHTTP
import WatchdogStore

/// The dashboard's sign-in: a token (viewer or admin) or a one-time link is exchanged for a
/// session cookie — `HttpOnly` (no script reads it), `SameSite=Strict` (no other site sends
/// it) — and a CSRF token the page sends back in `X-CSRF-Token` with every change.
/// Sessions and links are stored hashed, so they survive restarts and a stolen database holds
/// no usable secret.
final class DashboardSessions: Sendable {
    static let lifetimeMilliseconds: Int64 = 12 * 3_600_000
    static let linkLifetimeMilliseconds: Int64 = 24 * 3_600_000

    private let store: any TelemetryStore
    private let clock: @Sendable () -> Int64
    /// Verified sessions: used until they expire, re-read from the store every second so a
    /// sign-out elsewhere or a credential revoked by `watchdogd tokens revoke` (another process,
    /// which cannot reach this cache) ends them within a second.
    private let cache = Locked<[String: (principal: Principal, expiresAt: Int64, checkedAt: Int64)]>([:])
    /// How long a verified session or token is trusted without reading the store again: one
    /// indexed read per credential in use per second, against an ingest post's group commit.
    static let recheckMilliseconds: Int64 = 1_000

    init(store: any TelemetryStore, clock: @escaping @Sendable () -> Int64) {
        self.store = store
        self.clock = clock
    }

    /// A new session for a credential; returns the cookie value and the principal.
    func create(for credential: CredentialRecord) throws(APIError) -> (cookie: String, principal: Principal) {
        guard credential.role != .ingest else {
            throw .forbidden("the dashboard signs in with a viewer or admin token, not an ingest key")
        }
        let cookie = RandomSecret.hex(bytes: 32)
        let csrf = RandomSecret.hex(bytes: 16)
        let now = clock()
        let hash = CredentialHash.sha256(Array(cookie.utf8))
        try storeCall {
            try store.createSession(DashboardSession(idHash: hash, credentialID: credential.id, csrfToken: csrf, createdAt: now,
                                                     expiresAt: now + Self.lifetimeMilliseconds))
        }
        return (cookie, Principal(credential, csrfToken: csrf, sessionHash: hash))
    }

    /// The answer to a cookie whose session has ended (or never was): 401, and the cookie cleared.
    static let ended = APIError(status: 401, code: "unauthorized", message: "the dashboard session has ended; sign in again",
                                headers: [("Set-Cookie", SessionCookie.clear)])

    /// Whether `cookie` was verified before (it may be due for a recheck).
    func isKnown(_ cookie: String) -> Bool {
        cache.withLock { $0[cookie] != nil }
    }

    func principal(cookie: String) throws(APIError) -> Principal {
        guard cookie.utf8.count == 64 else { throw .unauthorized }
        let now = clock()
        if let cached = cache.withLock({ $0[cookie] }), now < cached.expiresAt, now - cached.checkedAt < Self.recheckMilliseconds {
            return cached.principal
        }
        let hash = CredentialHash.sha256(Array(cookie.utf8))
        guard let session = try storeCall({ try store.session(idHash: hash, now: now) }),
              let credential = try storeCall({ try store.credential(id: session.credentialID) }) else {
            _ = cache.withLock { $0.removeValue(forKey: cookie) }
            throw Self.ended
        }
        let principal = Principal(credential, csrfToken: session.csrfToken, sessionHash: hash)
        cache.withLock { cache in
            if cache.count > 10_000 { cache.removeAll() }
            cache[cookie] = (principal, session.expiresAt, now)
        }
        return principal
    }

    func end(_ principal: Principal) {
        guard let hash = principal.sessionHash else { return }
        try? store.deleteSession(idHash: hash)
        cache.withLock { cache in cache = cache.filter { $0.value.principal.sessionHash != hash } }
    }

    /// A one-time sign-in link for a credential: `/login?code=…`.
    func link(for credentialID: String) throws(APIError) -> (path: String, expiresAt: Int64) {
        let code = RandomSecret.hex(bytes: 24)
        let expires = clock() + Self.linkLifetimeMilliseconds
        try storeCall { try store.createLoginLink(codeHash: CredentialHash.sha256(Array(code.utf8)), credentialID: credentialID, expiresAt: expires) }
        return ("/login?code=\(code)", expires)
    }

    /// Whether `code` has the shape of a link's code (48 lowercase hex digits, as `link` makes).
    static func isLinkCode(_ code: String) -> Bool {
        code.utf8.count == 48 && code.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// Uses up a link; the credential it signs in as.
    func consume(code: String) throws(APIError) -> CredentialRecord {
        guard Self.isLinkCode(code),
              let id = try storeCall({ try store.consumeLoginLink(codeHash: CredentialHash.sha256(Array(code.utf8)), now: clock()) }),
              let credential = try storeCall({ try store.credential(id: id) }) else {
            throw .unauthorized
        }
        return credential
    }

    /// Forgets cached sessions of a credential (revoked).
    func forget(credentialID: String) {
        cache.withLock { cache in cache = cache.filter { $0.value.principal.credentialID != credentialID } }
    }
}

/// The `wd_session` cookie.
enum SessionCookie {
    static let name = "wd_session"

    /// `secure` (`--cookie-secure`, behind TLS): the browser then sends the cookie over HTTPS only.
    static func set(_ value: String, secure: Bool) -> String {
        "\(name)=\(value); Path=/; HttpOnly; SameSite=Strict; Max-Age=\(DashboardSessions.lifetimeMilliseconds / 1000)" + (secure ? "; Secure" : "")
    }

    static let clear = "\(name)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"

    static func value(in header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0].trimmingCharacters(in: " ") == name {
                return pair[1].trimmingCharacters(in: " ")
            }
        }
        return nil
    }
}
