import Dispatch

/// When a value kept in memory was read, on the monotonic clock, and whether it is still fresh.
///
/// The services that keep store reads in memory (admission and attestation settings, attested
/// installs, unlisted totals) look at the clock, then at the cache. Another thread can store a
/// newer reading in between, so a cached `readAt` may be *later* than the `now` a reader took:
/// that value is fresh. Subtracting the two as `UInt64` would trap — a CI run saw a node die
/// without a word under load while its database was cut off and many threads refreshed the same
/// entries at once. Every age goes through here instead.
struct CacheAge: Sendable, Equatable {
    /// Nanoseconds on the monotonic clock (`DispatchTime.uptimeNanoseconds`).
    let readAt: UInt64

    /// A reading taken now.
    static var now: CacheAge { CacheAge(readAt: DispatchTime.now().uptimeNanoseconds) }

    /// Nanoseconds from this reading to `now`; 0 when the reading is later than `now`.
    func nanoseconds(at now: UInt64) -> UInt64 {
        now >= readAt ? now - readAt : 0
    }

    /// True while fewer than `maximumSeconds` have passed since the reading at `now`.
    func isFresh(at now: UInt64, maximumSeconds: UInt64) -> Bool {
        nanoseconds(at: now) < maximumSeconds * 1_000_000_000
    }
}
