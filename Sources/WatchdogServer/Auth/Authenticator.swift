import Dispatch
import Locking
import WatchdogHTTP
import WatchdogStore

/// Turns `Authorization: Bearer <token>` into a `Principal`.
///
/// Tokens are looked up by their SHA-256, first in memory, then in the store (so a token that
/// `watchdogd tokens add` just created works at once), and the stored hash is compared with
/// the computed one in constant time. Looking up by hash reveals nothing about the secret.
final class Authenticator: Sendable {
    private let store: any TelemetryStore
    let sessions: DashboardSessions
    /// Tokens already verified against their stored hash, so the hot path skips SHA-256.
    /// Keyed by the token itself: it only ever holds tokens that proved valid. Re-verified
    /// every second, so a token revoked by `watchdogd tokens revoke` stops working within one.
    private let known = Locked<[String: (principal: Principal, checkedAt: Int64)]>([:])
    private let clock: @Sendable () -> Int64
    /// Refused credentials and the per-address budget of failed lookups.
    private let failures: FailedAuthGuard
    /// Reverse proxies whose `X-Forwarded-For` names the client the budget is counted for.
    private let trustedProxies: Set<String>
    private static let cacheLimit = 100_000
    /// Tokens whose re-check runs in the background now (`refreshInBackground`).
    private let refreshing = Locked<Set<String>>([])
    private let recheckQueue = DispatchQueue(label: "wd-auth-recheck")

    init(store: any TelemetryStore, clock: @escaping @Sendable () -> Int64, failures: FailedAuthGuard, trustedProxies: Set<String>) {
        self.store = store
        self.clock = clock
        self.failures = failures
        self.trustedProxies = trustedProxies
        sessions = DashboardSessions(store: store, clock: clock)
    }

    /// The caller — by `Authorization: Bearer`, else by the dashboard's session cookie — or
    /// `APIError.unauthorized` (429 when the client's address sent too many unknown ones).
    func principal(for request: HTTPRequest) throws(APIError) -> Principal {
        let address = IngestRoutes.client(of: request, trusting: trustedProxies)
        let now = clock()
        guard let header = request.headers["authorization"] else {
            guard let cookie = SessionCookie.value(in: request.headers["cookie"]) else { throw .unauthorized }
            if !sessions.isKnown(cookie) { try screen(cookie, address: address, now: now, refusal: DashboardSessions.ended) }
            do {
                return try sessions.principal(cookie: cookie)
            } catch {
                if error.status == 401 { failures.recordFailure(cookie, address: address, now: now) }
                throw error
            }
        }
        guard let token = Self.bearerToken(in: header) else { throw .unauthorized }
        let cached = known.withLock { $0[token] }
        if let cached {
            // Known tokens skip the budget: a recheck of a valid token is not an attack.
            let age = now - cached.checkedAt
            // A database across the network: the re-check of a token in use runs on a thread of
            // its own from half its age, so no request waits for it; a request waits only for
            // the first re-check of a token idle for a second, and not while the database is
            // known lost or that token's re-check is already on its way (issue 45).
            if let reachability = store.reachability {
                if !reachability.isReachable { return cached.principal }
                if age < DashboardSessions.recheckMilliseconds {
                    if age >= DashboardSessions.recheckMilliseconds / 2 { refreshInBackground(token) }
                    return cached.principal
                }
                if refreshing.withLock({ $0.contains(token) }) { return cached.principal }
            }
            if age < DashboardSessions.recheckMilliseconds { return cached.principal }
        } else {
            try screen(token, address: address, now: now, refusal: .unauthorized)
        }
        let hash = CredentialHash.sha256(Array(token.utf8))
        let record: CredentialRecord?
        do {
            record = try store.credential(secretHash: hash)
        } catch {
            // A token verified before stays valid while the database cannot say otherwise.
            if let cached, PostgresStore.isUnreachable(error) { return cached.principal }
            throw .unavailable("credentials could not be read from the store")
        }
        guard let record, constantTimeEquals(record.secretHash, hash) else {
            _ = known.withLock { $0.removeValue(forKey: token) }
            failures.recordFailure(token, address: address, now: now)
            throw .unauthorized
        }
        let principal = Principal(record)
        known.withLock { cache in
            if cache.count >= Self.cacheLimit { cache.removeAll() }
            cache[token] = (principal, now)
        }
        return principal
    }

    /// The token of an `Authorization: Bearer <token>` header (scheme case-insensitive, at
    /// most 256 bytes), or `nil`.
    static func bearerToken(in header: String) -> String? {
        // Byte-wise (it runs on every request): the scheme, one or more spaces, the token;
        // spaces and tabs around the token are not part of it.
        let bytes = header.utf8
        var index = bytes.startIndex
        while index < bytes.endIndex, bytes[index] == UInt8(ascii: " ") { index = bytes.index(after: index) }
        for expected in "bearer".utf8 {
            guard index < bytes.endIndex, bytes[index] | 0x20 == expected else { return nil }
            index = bytes.index(after: index)
        }
        guard index < bytes.endIndex, bytes[index] == UInt8(ascii: " ") else { return nil }
        var start = index
        var end = bytes.endIndex
        while start < end, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") { start = bytes.index(after: start) }
        while start < end, bytes[bytes.index(before: end)] == UInt8(ascii: " ") || bytes[bytes.index(before: end)] == UInt8(ascii: "\t") {
            end = bytes.index(before: end)
        }
        guard start < end, bytes.distance(from: start, to: end) <= 256 else { return nil }
        return String(header[start..<end])
    }

    /// The caller named by an `Authorization` header whose token was verified against the
    /// store within the last second, exactly as `principal(for:)` would answer it; `nil` for
    /// anything else (which `principal(for:)` then decides). Never reads the store.
    func recentlyVerified(authorization header: String) -> Principal? {
        guard let token = Self.bearerToken(in: header), let cached = known.withLock({ $0[token] }),
              clock() - cached.checkedAt < DashboardSessions.recheckMilliseconds else { return nil }
        return cached.principal
    }

    /// Re-checks a known token against the store on `recheckQueue`, once at a time per token:
    /// refreshed when still valid, forgotten when revoked, kept when the store did not answer.
    private func refreshInBackground(_ token: String) {
        guard refreshing.withLock({ $0.insert(token).inserted }) else { return }
        recheckQueue.async { [self] in
            defer { _ = refreshing.withLock { $0.remove(token) } }
            let hash = CredentialHash.sha256(Array(token.utf8))
            let record: CredentialRecord?
            do { record = try store.credential(secretHash: hash) } catch { return }
            guard let record, constantTimeEquals(record.secretHash, hash) else {
                _ = known.withLock { $0.removeValue(forKey: token) }
                return
            }
            let principal = Principal(record)
            known.withLock { $0[token] = (principal, clock()) }
        }
    }

    /// Refuses, before any hashing or store read, a credential refused a moment ago (with
    /// `refusal`) or any unknown one from an address past its budget of failed lookups (429).
    private func screen(_ credential: String, address: String, now: Int64, refusal: APIError) throws(APIError) {
        if failures.wasRefused(credential, now: now) { throw refusal }
        try failures.admit(address: address, now: now)
    }

    /// A refused sign-in that names no credential (OpenID Connect) spends the client's budget
    /// of failures, so a flood of forged callbacks is answered 429 before any work or audit row.
    func countRefusedSignIn(address: String) throws(APIError) {
        let now = clock()
        try failures.admit(address: address, now: now)
        failures.recordFailure(address: address, now: now)
    }

    /// Forgets a revoked credential.
    func forget(credentialID: String) {
        known.withLock { cache in
            cache = cache.filter { $0.value.principal.credentialID != credentialID }
        }
    }
}

extension Substring {
    /// Without the leading and trailing ASCII `characters` (header whitespace, `" \t"`).
    /// Byte-wise: it runs on every request's `Authorization` header.
    func trimmingCharacters(in characters: String) -> String {
        let trimmed = Array(characters.utf8)
        let bytes = utf8
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, trimmed.contains(bytes[start]) { start = bytes.index(after: start) }
        while start < end, trimmed.contains(bytes[bytes.index(before: end)]) { end = bytes.index(before: end) }
        return String(self[start..<end])
    }
}
