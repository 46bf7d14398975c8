// `Locked` is the project's own (module Locking, the same type WatchdogKit and the server use);
// re-exported here so that every test file sharing state between threads sees it.
@_exported import Locking

extension Locked {
    /// A copy of the value, read under the lock.
    var value: Value { withLock { $0 } }

    /// Changes the value under the lock.
    func update(_ body: (inout Value) -> Void) {
        withLock(body)
    }
}
