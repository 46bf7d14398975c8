import Locking
import WatchdogStore

/// Test crashes each install reported today (UTC, by arrival), kept in memory for the config
/// hot path and reloaded from the store after every commit that carried a test crash.
final class TestCrashBudget: Sendable {
    private struct Day {
        var day: Int64 = -1
        var counts: [String: Int] = [:]
    }

    private let store: any TelemetryStore
    private let clock: @Sendable () -> Int64
    private let state = Locked(Day())

    init(store: any TelemetryStore, clock: @escaping @Sendable () -> Int64) {
        self.store = store
        self.clock = clock
        reload()
    }

    func crashesToday(app: String, installID: String) -> Int {
        let today = clock() / 86_400_000
        let (day, count) = state.withLock { ($0.day, $0.counts[Self.key(app, installID)] ?? 0) }
        if day == today { return count }
        reload()
        return state.withLock { $0.counts[Self.key(app, installID)] ?? 0 }
    }

    /// Reads today's counts from the store.
    func reload() {
        let today = clock() / 86_400_000
        guard let rows = try? store.testCrashCounts(day: today) else { return }
        var counts: [String: Int] = [:]
        for row in rows { counts[Self.key(row.app, row.installID)] = row.crashes }
        state.withLock { $0 = Day(day: today, counts: counts) }
    }

    private static func key(_ app: String, _ install: String) -> String { app + "\u{1F}" + install }
}
