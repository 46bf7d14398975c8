import Dispatch
import Locking
import WatchdogStore

/// The unlisted releases' totals per app, as `/releases` shows them: counting them reads every
/// unlisted release (100,000 junk releases: ~35 ms of a busy core), and `/releases` is what every
/// dashboard page loads. So they are kept in memory, at most `maximumAgeSeconds` old: an older
/// entry is answered once more while it is read again off the request path (one read at a
/// time, on `queue`). Only an app's first request reads them on the spot. Admins' changes drop
/// the entry; the admin listing, which reads them anyway, stores what it read.
final class UnlistedTotals: Sendable {
    private struct Entry {
        var totals: UnlistedReleases
        var readAt: CacheAge
        var refreshing = false
    }

    let store: any TelemetryStore
    /// Where the reads over every unlisted release run, one at a time, so that none holds one
    /// of the HTTP server's few threads (the admin listing runs here too).
    let queue = DispatchQueue(label: "watchdogd.unlisted-releases", qos: .utility)
    private let entries = Locked<[String: Entry]>([:])
    static let maximumAgeSeconds: UInt64 = 5

    init(store: any TelemetryStore) {
        self.store = store
    }

    /// The app's unlisted totals (without a page), at most `maximumAgeSeconds` old but for the
    /// one answer that starts a new read.
    func totals(app: String) throws(APIError) -> UnlistedReleases {
        let now = DispatchTime.now().uptimeNanoseconds
        let (cached, stale) = entries.withLock { entries -> (UnlistedReleases?, Bool) in
            guard var entry = entries[app] else { return (nil, false) }
            guard !entry.readAt.isFresh(at: now, maximumSeconds: Self.maximumAgeSeconds), !entry.refreshing else { return (entry.totals, false) }
            entry.refreshing = true
            entries[app] = entry
            return (entry.totals, true)
        }
        if stale {
            queue.async { [self] in
                if (try? read(app: app)) == nil { entries.withLock { $0[app]?.refreshing = false } }
            }
        }
        if let cached { return cached }
        return try read(app: app)
    }

    /// Stores totals just read (with a page, by the admin listing).
    func store(_ totals: UnlistedReleases, app: String) {
        var totals = totals
        totals.page = []
        let entry = Entry(totals: totals, readAt: CacheAge.now)
        entries.withLock { entries in
            // Apps are made by admins: a handful. A bound all the same.
            if entries.count > 10_000 { entries.removeAll() }
            entries[app] = entry
        }
    }

    /// Forgets an app's totals (a release was declared, admitted, unlisted or deleted).
    func forget(app: String) {
        _ = entries.withLock { $0.removeValue(forKey: app) }
    }

    private func read(app: String) throws(APIError) -> UnlistedReleases {
        let totals = try storeCall { try store.unlistedReleases(app: app, offset: 0, limit: 0) }
        store(totals, app: app)
        return totals
    }
}
