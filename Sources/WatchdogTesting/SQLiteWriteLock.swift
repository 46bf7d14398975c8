import Dispatch
import Foundation
import GRDB

/// Another connection holding SQLite's write lock (`BEGIN IMMEDIATE`) on a database file, from a
/// thread of its own until `release()`: the daemon's writer stalls for real behind it.
///
/// ```swift
/// let lock = try SQLiteWriteLock(path: dataDir + "/watchdog.sqlite3")
/// defer { lock.release() }   // whatever happens in between
/// ```
public final class SQLiteWriteLock: Sendable {
    private let releasing = DispatchSemaphore(value: 0)
    private let unlocked = DispatchSemaphore(value: 0)

    /// Returns once the lock is held; throws if it is not within 10 s.
    public init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        let blocker = try DatabaseQueue(path: path, configuration: configuration)
        let locked = DispatchSemaphore(value: 0)
        Thread { [releasing, unlocked] in
            try? blocker.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                locked.signal()
                releasing.wait()
                try db.execute(sql: "COMMIT")
            }
            unlocked.signal()
        }.start()
        guard locked.wait(timeout: .now() + 10) == .success else {
            releasing.signal()
            throw NotLocked(path: path)
        }
    }

    /// Lets the lock go (more calls do nothing more).
    public func release() {
        releasing.signal()
    }

    /// Waits until the lock is released and the connection's transaction ended.
    public func waitUntilReleased() {
        unlocked.wait()
        unlocked.signal()
    }

    /// Another connection already held the lock for 10 s.
    public struct NotLocked: Error, CustomStringConvertible {
        public var path: String
        public var description: String { "could not take SQLite's write lock on \(path) within 10 s" }
    }
}
