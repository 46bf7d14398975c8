import Locking
import WatchdogStore

/// Figures of a release that take a pass over its installs (their concentration, the sums of
/// the design effect), computed once per state of the release: `/releases` shows them for every
/// release, most of which no longer change. An entry is recomputed when the release's session
/// starts or active reports change.
final class ReleaseStateCache<Value: Sendable>: Sendable {
    private struct Key: Hashable {
        var app: String
        var release: ReleaseID
    }

    private struct Entry {
        var stamp: [Int]
        var value: Value
    }

    private let entries = Locked<[Key: Entry]>([:])
    /// More releases than this across all apps: the cache starts over rather than grow.
    static var capacity: Int { 10_000 }

    func value(app: String, release: ReleaseStats, compute: () throws -> Value) throws -> Value {
        let key = Key(app: app, release: release.release)
        let stamp = [release.sessions, release.affectedSessions, release.reportsByKind.values.reduce(0, +), release.floodedReportsByKind.values.reduce(0, +)]
        if let entry = entries.withLock({ $0[key] }), entry.stamp == stamp { return entry.value }
        let value = try compute()
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll() }
            entries[key] = Entry(stamp: stamp, value: value)
        }
        return value
    }

    /// Drops a release's entry: a deleted release, made again, could match its old stamp.
    func forget(app: String, release: ReleaseID) {
        _ = entries.withLock { $0.removeValue(forKey: Key(app: app, release: release)) }
    }
}
