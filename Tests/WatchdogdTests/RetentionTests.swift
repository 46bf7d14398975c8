import Foundation
import GRDB
import Testing
import WatchdogTesting

@Suite(.enabled(if: TestStore.isSQLite, "reads SQLite pages; PostgreSQL retention is in PostgresRetentionTests")) struct RetentionTests {
    /// The demo's older release arrived about 8 days ago: with 7 days of retention its raw
    /// reports go, its stats stay, and the file gives the pages back.
    @Test func rawReportsPastRetentionArePrunedWhileReleaseStatsStay() throws {
        let daemon = try Daemon(demo: true, extraArguments: ["--retention-days", "7", "--retention-interval", "1"])
        let viewer = try #require(daemon.exports["WATCHDOG_VIEWER_TOKEN"])
        func pages() throws -> Int { try daemon.query { try Int.fetchOne($0, sql: "PRAGMA page_count") ?? 0 } }
        func olderRows() throws -> Int {
            try daemon.query { try Int.fetchOne($0, sql: "SELECT count(*) FROM report_texts WHERE version = '14.1.0'") ?? -1 }
        }
        let before = try daemon.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer).json
        let deadline = Date().addingTimeInterval(30)
        while try olderRows() > 0, Date() < deadline { usleep(200_000) }
        #expect(try olderRows() == 0, "the older release's raw reports were pruned")
        #expect(try daemon.query { try Int.fetchOne($0, sql: "SELECT count(*) FROM report_texts WHERE version = '14.2.0'") ?? 0 } > 0, "recent ones stay")
        let after = try daemon.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer).json
        #expect(NSDictionary(dictionary: before) == NSDictionary(dictionary: after), "release stats are roll-ups: unchanged")
        // The pass hands pages back after its last batch.
        func free() throws -> Int { try daemon.query { try Int.fetchOne($0, sql: "PRAGMA freelist_count") ?? -1 } }
        // Its own bound (on failure, not a measure): under a loaded CI run the pruning above can
        // use up the first one, and the freelist was then read once, before the vacuum ran.
        let reclaimDeadline = Date().addingTimeInterval(60)
        while try free() >= 50, Date() < reclaimDeadline { usleep(200_000) }
        let freelist = try free()
        let total = try pages()
        #expect(freelist < 50, "freed pages went back to the file system (incremental vacuum): \(freelist) left, \(total) in the file")
    }

    /// The retention job prunes audit rows past `--audit-retention-days` (raw data kept
    /// forever here: `--retention-days 0`) and keeps younger ones.
    @Test func auditRowsPastTheirRetentionArePrunedByTheRetentionJob() throws {
        let daemon = try Daemon(extraArguments: ["--retention-days", "0", "--audit-retention-days", "2", "--retention-interval", "1"])
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let queue = try DatabaseQueue(path: daemon.dataDir.appendingPathComponent("watchdog.sqlite3").path)
        try queue.write { db in
            for (age, action) in [(3, "old"), (1, "young")] {
                try db.execute(sql: "INSERT INTO audit_log (at, actor, address, action) VALUES (?, 'test', 'local', ?)",
                               arguments: [now - Int64(age) * 86_400_000, action])
            }
        }
        try queue.close()
        func actions() throws -> [String] { try daemon.query { try String.fetchAll($0, sql: "SELECT action FROM audit_log ORDER BY id") } }
        // Its own bound (on failure, not a measure): the first pass comes within a second or so.
        let deadline = Date().addingTimeInterval(30)
        while try actions().contains("old"), Date() < deadline { usleep(200_000) }
        #expect(try actions() == ["young"])
    }
}
