import Locking

/// Keeps unknown credentials cheap. A token or cookie that is not in the verified cache costs
/// a SHA-256 and a store read; garbage sent in a flood would make everyone wait for those.
///
/// - A refused credential is remembered (bounded, for a minute) and refused again at once: a
///   fleet still sending a revoked ingest key costs one lookup a minute, not one per request.
///   A credential cannot be refused before it exists (the secret is random and shown once, at
///   creation), so remembering a refusal never locks out a new token.
/// - Each client address has a budget of lookups that failed (token bucket); past it, new
///   unknown credentials from that address get 429 with `Retry-After` before any work. Known
///   credentials are never subject to it, so a normal client behind the same address keeps
///   working.
final class FailedAuthGuard: Sendable {
    private let refused = Locked<[String: Int64]>([:])
    private let perAddress: RateLimiter?
    private let metrics: ServerMetrics
    static let refusedLimit = 10_000
    static let rememberMilliseconds: Int64 = 60_000

    /// `perSecond` failed lookups per address on average, bursts of ten times that; 0: no limit.
    init(perSecond: Double, metrics: ServerMetrics) {
        perAddress = RateLimiter(rate: perSecond, burst: perSecond * 10)
        self.metrics = metrics
    }

    /// Whether `credential` was refused within the last minute.
    func wasRefused(_ credential: String, now: Int64) -> Bool {
        guard let at = refused.withLock({ $0[credential] }) else { return false }
        return now - at < Self.rememberMilliseconds
    }

    /// Throws 429 when `address` has used up its budget of failed lookups.
    func admit(address: String, now: Int64) throws(APIError) {
        guard let perAddress, let wait = perAddress.peek(address, now: now) else { return }
        metrics.rateLimitedFailedAuth.increment()
        let seconds = max(1, Int(wait.rounded(.up)))
        throw APIError(status: 429, code: "rate_limited",
                       message: "this address sent more than \(Int(perAddress.rate)) unknown credentials a second; retry after \(seconds) s",
                       headers: [("Retry-After", String(seconds))])
    }

    /// Spends one of `address`'s failures on a refused sign-in that names no credential
    /// (OpenID Connect: a forged or replayed callback).
    func recordFailure(address: String, now: Int64) {
        _ = perAddress?.take(address, now: now)
    }

    /// Records a lookup that found no live credential.
    func recordFailure(_ credential: String, address: String, now: Int64) {
        _ = perAddress?.take(address, now: now)
        refused.withLock { refused in
            if refused.count >= Self.refusedLimit {
                refused = refused.filter { now - $0.value < Self.rememberMilliseconds }
                if refused.count >= Self.refusedLimit { refused.removeAll() }
            }
            refused[credential] = now
        }
    }
}
