import Foundation

/// A value guarded by a lock, for state shared across threads.
///
/// Used instead of `Synchronization.Mutex` for two reasons: WatchdogKit supports iOS 13 (Mutex
/// needs iOS 18), and on Linux Mutex waits on a raw futex that ThreadSanitizer cannot see, so
/// every access it guards is reported as a race and the TSan run (Tests/ThreadSanitizer) would
/// be noise. `NSLock` is a pthread mutex, which TSan understands.
public final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    /// Guards `value`.
    public init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
