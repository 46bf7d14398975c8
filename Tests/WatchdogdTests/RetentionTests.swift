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
}
