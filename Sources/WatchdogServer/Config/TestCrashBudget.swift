import Locking
import WatchdogStore

/// Test crashes each install reported today (UTC, by arrival), kept in memory for the config
/// hot path.
///
/// Kept up to date incrementally: each commit hands over the test crashes it stored (per
/// install, duplicates excluded), which are added under a lock — O(batch), never a re-read of
/// the table, so an ingest key (public: it ships in the app) posting test crashes for
/// hundreds of thousands of installs cannot stall the single writer. Memory is bounded: past
/// `maximumInstalls` tracked installs, installs not in memory are read from the store (one
/// primary-key lookup) when their config is asked for with `test_crash` on. The table is read
/// once, at start (at most `maximumInstalls` rows); a new UTC day starts empty. On a store
/// shared by several nodes (PostgreSQL) the count is read from the store every time, since the
/// other nodes' commits are not handed over here.
final class TestCrashBudget: Sendable {
    private struct Day {
        var day: Int64 = -1
        var counts: [String: Int] = [:]
        /// Some installs' counts are not in memory (more than `maximumInstalls` today).
        var overflowed = false
    }

    static let maximumInstalls = 100_000
    private let store: any TelemetryStore
    private let clock: @Sendable () -> Int64
    private let state = Locked(Day())

    init(store: any TelemetryStore, clock: @escaping @Sendable () -> Int64) {
        self.store = store
        self.clock = clock
        let today = clock() / 86_400_000
        var loaded = Day(day: today)
        if let rows = try? store.testCrashCounts(day: today, limit: Self.maximumInstalls + 1) {
            for row in rows.prefix(Self.maximumInstalls) { loaded.counts[Self.key(row.app, row.installID)] = row.crashes }
            loaded.overflowed = rows.count > Self.maximumInstalls
        } else {
            loaded.overflowed = true
        }
        state.withLock { $0 = loaded }
    }

    func crashesToday(app: String, installID: String) -> Int {
        let today = clock() / 86_400_000
        let key = Self.key(app, installID)
        let (known, overflowed) = state.withLock { state -> (Int?, Bool) in
            if state.day < today { state = Day(day: today) }
            return (state.counts[key], state.overflowed)
        }
        // Several nodes on one store: others count test crashes too, so the store decides.
        if store is any SharedTelemetryStore { return (try? store.testCrashCount(app: app, installID: installID, day: today)) ?? known ?? 0 }
        if let known { return known }
        guard overflowed else { return 0 }
        return (try? store.testCrashCount(app: app, installID: installID, day: today)) ?? 0
    }

    /// Adds the test crashes one commit stored on `day` (UTC days since the epoch).
    func record(_ crashes: [TestCrashCount], day: Int64) {
        state.withLock { state in
            if day > state.day { state = Day(day: day) }
            guard day == state.day else { return }
            for crash in crashes {
                let key = Self.key(crash.app, crash.installID)
                if let count = state.counts[key] {
                    state.counts[key] = count + crash.crashes
                } else if state.counts.count < Self.maximumInstalls {
                    state.counts[key] = crash.crashes
                } else {
                    state.overflowed = true
                }
            }
        }
    }

    private static func key(_ app: String, _ install: String) -> String { app + "\u{1F}" + install }
}
