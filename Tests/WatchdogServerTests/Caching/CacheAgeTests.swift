import Testing
@testable import WatchdogServer

/// A reading stored by another thread after this one looked at the clock is fresh, not a
/// negative age: the `UInt64` subtraction it replaced trapped and took a node down under load.
struct CacheAgeTests {
    @Test func aReadingLaterThanNowIsFreshAndZeroOld() {
        let later = CacheAge(readAt: 5_000_000_000)
        #expect(later.nanoseconds(at: 4_000_000_000) == 0)
        #expect(later.isFresh(at: 4_000_000_000, maximumSeconds: 10))
        #expect(later.isFresh(at: 0, maximumSeconds: 1))
    }

    @Test func aReadingIsFreshForItsMaximumAgeAndNoLonger() {
        let reading = CacheAge(readAt: 1_000_000_000)
        #expect(reading.isFresh(at: 10_999_999_999, maximumSeconds: 10))
        #expect(!reading.isFresh(at: 11_000_000_000, maximumSeconds: 10))
        #expect(reading.nanoseconds(at: 3_500_000_000) == 2_500_000_000)
        // Nothing is fresh for 0 seconds: every call reads again.
        #expect(!reading.isFresh(at: 1_000_000_000, maximumSeconds: 0))
    }
}
