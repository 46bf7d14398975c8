import Foundation
import Locking
import PostgresClient
import Testing
import WatchdogStore
import WatchdogTesting

/// Retention on PostgreSQL: whole days of reports go by dropping their partition, the rest of
/// the cutoff's day row by row — exactly the rows the SQLite store prunes — and roll-ups stay.
@Suite(.enabled(if: !TestStore.isSQLite, "PostgreSQL partitions"))
struct PostgresRetentionTests {
    static let day: Int64 = 86_400_000

    /// A fresh report that occurred a minute before `milliseconds`.
    static func report(at milliseconds: Int64) throws -> [String: Any] {
        var report = try Fixtures.freshReport(app: "com.example.mail")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        report["occurred_at"] = formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds - 60_000) / 1000))
        return report
    }

    @Test func wholeDaysAreDroppedAsPartitionsAndTheCutoffsDayRowByRow() throws {
        // Reports received at noon ten, nine and eight days ago, and now.
        let now = WatchdogServerTestClock.now
        let clock = TestClock(now: (now / Self.day - 10) * Self.day + Self.day / 2)
        let app = try TestApplication(clock: clock)
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        var posted: [Int64: [String]] = [:]
        for daysAgo: Int64 in [10, 9, 8, 0] {
            if daysAgo < 10 { clock.advance(milliseconds: (daysAgo == 0 ? 8 : 1) * Self.day) }
            let reports = try (0..<5).map { _ in try Self.report(at: clock.now) }
            #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": reports]).status == 202)
            posted[daysAgo] = reports.compactMap { $0["id"] as? String }
        }
        let store = try #require(app.store as? PostgresStore)
        let today = clock.now / Self.day
        #expect(try Set(store.partitions()).isSuperset(of: [today - 10, today - 9, today - 8, today]))

        // Cutoff: 9 days ago at 18:00 — day −10 is dropped whole, day −9's noon rows deleted.
        let cutoff = (today - 9) * Self.day + Self.day * 3 / 4
        var pruned = 0
        while true {
            let deleted = try store.prune(receivedBefore: cutoff, limit: 3)
            if deleted == 0 { break }
            pruned += deleted
        }
        #expect(pruned == 10)
        #expect(try !store.partitions().contains(today - 10), "day −10 is a dropped partition")
        #expect(try store.partitions().contains(today - 9), "day −9 keeps its partition (its later hours may hold rows)")
        let left = Set(try app.storedReports().map(\.id))
        #expect(left == Set(posted[8]! + posted[0]!))

        // Roll-ups stay; a pruned id posted again is new again (as on SQLite: past retention).
        let releases = try app.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer).json["releases"] as? [[String: Any]]
        #expect(releases?.first?["reports"] as? Int == 20)
        var old = try Self.report(at: clock.now)
        old["id"] = posted[10]![0]
        #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": [old]]).json["accepted"] as? Int == 1)
    }

    @Test func twoNodesPruningAtOnceDeleteEachRowOnce() throws {
        let now = WatchdogServerTestClock.now
        let clock = TestClock(now: now - 3 * Self.day)
        let a = try TestApplication(clock: clock)
        let key = try a.addApp("com.example.mail")
        for _ in 0..<4 {
            let reports = try (0..<25).map { _ in try Self.report(at: clock.now) }
            #expect(try a.client.postJSON("/v1/reports", token: key, json: ["reports": reports]).status == 202)
        }
        let b = try TestApplication(clock: clock, sharing: a)
        let stores = try [a, b].map { try #require($0.store as? PostgresStore) }
        let totals = Locked([0, 0])
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { node in
            do {
                // Each node keeps asking until neither has anything left to prune.
                var idle = 0
                while idle < 20 {
                    let deleted = try stores[node].prune(receivedBefore: now - Self.day, limit: 7)
                    totals.withLock { $0[node] += deleted }
                    idle = deleted == 0 ? idle + 1 : 0
                    usleep(1_000)
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(try a.storedReportCount() == 0)
        print("retention on two nodes: \(totals.withLock { $0 }) rows pruned by each")
    }
}

/// The real time, for tests that place data days back.
enum WatchdogServerTestClock {
    static var now: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}
