import Locking
import WatchdogStore

/// The concentration of each release's reports, computed once per state of the release: it
/// sorts the release's installs, and `/releases` shows it for every release, most of which
/// no longer change. A release's entry is recomputed when its sessions or active reports change.
final class ConcentrationCache: Sendable {
    private struct Key: Hashable {
        var app: String
        var release: ReleaseID
    }

    private struct Entry {
        var stamp: [Int]
        var value: InstallConcentration
    }

    private let entries = Locked<[Key: Entry]>([:])
    /// More releases than this across all apps: the cache starts over rather than grow.
    static let capacity = 10_000

    func concentration(store: any TelemetryStore, app: String, release: ReleaseStats) throws -> InstallConcentration {
        let key = Key(app: app, release: release.release)
        let stamp = [release.sessions, release.reportsByKind.values.reduce(0, +), release.floodedReportsByKind.values.reduce(0, +)]
        if let entry = entries.withLock({ $0[key] }), entry.stamp == stamp { return entry.value }
        let value = try store.concentration(app: app, release: release.release)
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll() }
            entries[key] = Entry(stamp: stamp, value: value)
        }
        return value
    }
}
