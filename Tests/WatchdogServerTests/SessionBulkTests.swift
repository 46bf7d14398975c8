import Foundation
import Testing
@testable import WatchdogServer
import WatchdogStore
import WatchdogWire
import WatchdogTesting

/// The overlay aligns releases on the start of their bulk of sessions, and a cut keeps the
/// buckets around that bulk: an outlying session cannot push a release's data out of view.
@Suite struct SessionBulkTests {
    static func hour(_ text: String) -> Int64 { (Timestamp.parseMilliseconds(text) ?? 0) / 3_600_000 }

    /// The day after `Limits`' earliest time (2007-01-09, the first iPhone): the oldest start
    /// ingest accepts, fixed by the protocol rather than by the clock.
    static let oldestAccepted = "2007-01-10T00:00:00Z"

    @Test func theBulkStartsWhereOnePercentAndAtLeastFiveSessionsHaveStarted() throws {
        #expect(SessionBulk.threshold(total: 1) == 1)
        #expect(SessionBulk.threshold(total: 20) == 2, "10 % below 50 sessions")
        #expect(SessionBulk.threshold(total: 400) == 5)
        #expect(SessionBulk.threshold(total: 2_000) == 20)
        // SessionBulk reads no clock: the hours it is given are all it sees.
        let bulkStart = FixtureDay.reports.adding(days: -10).milliseconds() / 3_600_000
        let outlier: (hour: Int64, sessions: Int) = (Self.hour(Self.oldestAccepted), 1)
        let late: (hour: Int64, sessions: Int) = (bulkStart + 17 * 24 + 8, 1)
        let bulk = (0..<48).map { (hour: bulkStart + Int64($0), sessions: 10) }
        let found = try #require(SessionBulk([late] + bulk + [outlier]))
        #expect(found.start == bulkStart && found.end == bulkStart + 47 && found.total == 482)
        // Few sessions: a single one is its own bulk; two far apart start at the first.
        #expect(SessionBulk([outlier])?.start == outlier.hour)
        #expect(SessionBulk([outlier, late]).map { [$0.start, $0.end] } == [outlier.hour, late.hour])
        #expect(SessionBulk([]) == nil)
    }

    @Test func aCutKeepsTheBulkWhereverItIsInTheRange() {
        // Range 0…9,999, 5,000 buckets kept.
        func start(_ bulk: ClosedRange<Int64>) -> Int64 { SessionBulk.windowStart(first: 0, last: 9_999, bulk: bulk, maximum: 5_000) }
        #expect(start(9_000...9_500) == 5_000, "a late bulk: the latest buckets, as before")
        #expect(start(1_000...1_200) == 1_000, "an early bulk: from its start")
        #expect(start(1_000...8_000) == 3_001, "a bulk longer than the window: its latest buckets")
        #expect(SessionBulk.windowStart(first: 0, last: 100, bulk: 50...60, maximum: 5_000) == 0, "no cut needed")
    }

    @Test func anOutlyingSessionNeitherMovesTheOverlayStartNorHidesTheRealDays() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let targetDay = FixtureDay.reports, baseDay = targetDay.adding(days: -10)
        let base = try VerdictTests.sessions(app, key: key, version: "14.1.0", build: "1", count: 20, startedAt: baseDay.at(12))
        _ = try VerdictTests.sessions(app, key: key, version: "14.2.0", build: "2", count: 20, startedAt: targetDay.at(12))
        // One session of each release dated 2007 (the oldest accepted), one report in each release's bulk.
        _ = try VerdictTests.sessions(app, key: key, version: "14.1.0", build: "1", count: 1, startedAt: Self.oldestAccepted)
        _ = try VerdictTests.sessions(app, key: key, version: "14.2.0", build: "2", count: 1, startedAt: Self.oldestAccepted)
        var report = try Fixtures.freshReport(version: "14.1.0", build: "1", kind: "view_frame_mismatch", sessionID: base[0])
        report["occurred_at"] = baseDay.at(12, 30)
        try VerdictTests.post(app, key: key, [report])

        let overlay = try app.client.request("GET", "\(VerdictTests.app)/overlay?base=14.1.0&target=14.2.0&bucket=day", token: viewer)
        #expect(overlay.status == 200, "\(overlay.text)")
        #expect(overlay.json["aligned_by"] as? String == "since_bulk_start")
        #expect(overlay.json["truncated"] as? Bool == false)
        let lines = try #require(overlay.json["releases"] as? [[String: Any]])
        #expect(lines.map { $0["aligned_start"] as? String } == [baseDay.written(), targetDay.written()])
        let oldest = Timestamp.format(milliseconds: Timestamp.parseMilliseconds(Self.oldestAccepted)!)
        #expect(lines.map { $0["first_session"] as? String } == [oldest, oldest])
        #expect(lines.map { $0["sessions_before_start"] as? Int } == [1, 1])
        #expect(lines.map { ($0["sessions"] as? [Any])?.first as? Int } == [20, 20], "day 0 of each release is its real first day")
        #expect((lines[0]["reports"] as? [Any])?.first as? Int == 1)
    }

    @Test func aLongTimeseriesIsCutAroundTheBulkNotFromAnOutlier() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        // The release's sessions over a year ago, one dated 2007 and one from today: hourly from
        // 2007 to now is far more than 5,000 buckets.
        let yearAgo = FixtureDay.today.adding(days: -390)
        _ = try VerdictTests.sessions(app, key: key, version: "14.1.0", build: "1", count: 100, startedAt: yearAgo.at(12))
        _ = try VerdictTests.sessions(app, key: key, version: "14.1.0", build: "1", count: 1, startedAt: Self.oldestAccepted)
        _ = try VerdictTests.sessions(app, key: key, version: "14.1.0", build: "1", count: 1, startedAt: Timestamp.format(milliseconds: app.clock.now - 3_600_000))
        let series = try app.client.request("GET", "\(VerdictTests.app)/timeseries?release=14.1.0&bucket=hour", token: viewer)
        #expect(series.status == 200, "\(series.text)")
        #expect(series.json["truncated"] as? Bool == true)
        let buckets = try #require(series.json["buckets"] as? [String])
        #expect(buckets.count == SeriesRoutes.maximumBuckets && buckets.first == yearAgo.written(12))
        #expect((series.json["sessions"] as? [Int])?.reduce(0, +) == 100, "the bulk is in the window")
    }
}
