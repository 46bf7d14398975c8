import Locking

/// Token buckets by key (an ingest key, a client address): `rate` requests a second on
/// average, bursts up to `burst`. A flood from one key empties only its own bucket.
final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updatedAt: Int64
    }

    let rate: Double
    let burst: Double
    private let buckets = Locked<[String: Bucket]>([:])
    /// Past this many keys, buckets idle long enough to be full again are dropped.
    private static let pruneAbove = 100_000

    /// `nil` when `rate` is 0 (no limit).
    init?(rate: Double, burst: Double) {
        guard rate > 0 else { return nil }
        self.rate = rate
        self.burst = max(1, burst)
    }

    /// Like `take`, without taking: `nil` if `key` has a token, else the seconds until it has.
    func peek(_ key: String, now: Int64) -> Double? {
        buckets.withLock { buckets in
            guard let bucket = buckets[key] else { return nil }
            let tokens = min(burst, bucket.tokens + Double(max(0, now - bucket.updatedAt)) / 1000 * rate)
            return tokens >= 1 ? nil : (1 - tokens) / rate
        }
    }

    /// Takes a token for `key`; `nil` if there was one, else the seconds until there is.
    func take(_ key: String, now: Int64) -> Double? {
        buckets.withLock { buckets in
            if buckets.count > Self.pruneAbove {
                let idle = Int64(burst / rate * 1000)
                buckets = buckets.filter { now - $0.value.updatedAt < idle }
            }
            var bucket = buckets[key] ?? Bucket(tokens: burst, updatedAt: now)
            bucket.tokens = min(burst, bucket.tokens + Double(max(0, now - bucket.updatedAt)) / 1000 * rate)
            bucket.updatedAt = now
            defer { buckets[key] = bucket }
            guard bucket.tokens >= 1 else { return (1 - bucket.tokens) / rate }
            bucket.tokens -= 1
            return nil
        }
    }
}

/// The limits ingest runs under.
struct IngestLimits: Sendable {
    let perKey: RateLimiter?
    let perAddress: RateLimiter?
    let metrics: ServerMetrics

    /// Throws 429 with `Retry-After` when the key's or the address's bucket is empty.
    func check(key: String, address: String, now: Int64) throws(APIError) {
        if let wait = perAddress?.take(address, now: now) {
            metrics.rateLimitedByAddress.increment()
            throw Self.limited("this address sends more than \(Self.format(perAddress!.rate)) requests a second", wait)
        }
        if let wait = perKey?.take(key, now: now) {
            metrics.rateLimitedByKey.increment()
            throw Self.limited("this ingest key sends more than \(Self.format(perKey!.rate)) requests a second", wait)
        }
    }

    private static func limited(_ reason: String, _ wait: Double) -> APIError {
        let seconds = max(1, Int(wait.rounded(.up)))
        return APIError(status: 429, code: "rate_limited", message: "\(reason); retry after \(seconds) s (batch reports: up to 500 per request)",
                        headers: [("Retry-After", String(seconds))])
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
