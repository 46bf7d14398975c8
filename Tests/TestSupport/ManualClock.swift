import Locking

/// A clock that moves only when a test says so, for the `clock:` parameters of WatchdogKit
/// (`WatchdogAgent`, `Uploader`, `RemoteConfigClient`): pass `{ clock.now }`, then `advance`
/// past a backoff or a refresh interval instead of sleeping through it.
///
/// ```swift
/// let clock = ManualClock(1000)
/// let uploader = Uploader(outbox: outbox, endpoint: url, ingestKey: "k", clock: { clock.now }, logger: logger)
/// clock.advance(2)
/// ```
public final class ManualClock: Sendable {
    private let seconds: Locked<Double>

    /// A clock that reads `start` seconds until advanced.
    public init(_ start: Double = 0) {
        seconds = Locked(start)
    }

    /// Seconds, as the code under test reads them.
    public var now: Double { seconds.withLock { $0 } }

    /// Moves the clock forward.
    public func advance(_ interval: Double) {
        seconds.withLock { $0 += interval }
    }
}
