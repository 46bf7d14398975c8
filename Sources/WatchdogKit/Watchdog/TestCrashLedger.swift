import Foundation
import WatchdogWire

/// Test crashes this install did today (UTC), kept on disk so the daily budget holds across
/// the very crashes it counts. The server enforces the budget too; this copy makes an offline
/// device, or one with a stale cached config, stop on its own.
public final class TestCrashLedger: @unchecked Sendable {
    private struct Entry: Codable {
        var day: Int64
        var count: Int
    }

    private let file: URL?
    private let lock = NSLock()
    private var entry: Entry

    /// `file` nil: kept in memory only.
    public init(file: URL?) {
        self.file = file
        entry = file.flatMap { try? Data(contentsOf: $0) }.flatMap { try? JSONDecoder().decode(Entry.self, from: $0) } ?? Entry(day: -1, count: 0)
    }

    /// Test crashes of this install on `now`'s UTC day.
    public func crashesToday(at now: Date) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return entry.day == Self.day(now) ? entry.count : 0
    }

    /// Counts a test crash; written to disk before it returns (the app dies right after).
    public func record(at now: Date) {
        lock.lock()
        let today = Self.day(now)
        entry = Entry(day: today, count: entry.day == today ? entry.count + 1 : 1)
        let snapshot = entry
        lock.unlock()
        if let file, let data = try? JSONEncoder().encode(snapshot) { try? data.write(to: file, options: .atomic) }
    }

    /// Whether `test_crash` may crash now under `config`: on, not expired, budget left.
    public func allows(_ config: WatchdogConfig, at now: Date) -> Bool {
        guard config.testCrash else { return false }
        if let expiry = config.testCrashExpiresAt, let time = Timestamp.parseMilliseconds(expiry),
           Int64(now.timeIntervalSince1970 * 1000) >= time { return false }
        return crashesToday(at: now) < config.testCrashBudget
    }

    private static func day(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 / 86_400).rounded(.down))
    }
}
