import Foundation
import Testing
import WatchdogServer
@testable import WatchdogTesting
import WatchdogWire

/// The tests' calendar moves with the clock: fixture dates are moved by whole days, written as
/// they were, and nothing else in a fixture changes.
@Suite struct FixtureDayTests {
    @Test func aDateMovesByWholeDaysKeepingItsFractionOffsetAndMonthBoundaries() {
        // The inputs are fixed on purpose: moving a date reads no clock.
        #expect(FixtureDay.moveDate("2026-11-20T10:00:01.001Z", byDays: 12) == "2026-12-02T10:00:01.001Z")
        #expect(FixtureDay.moveDate("2026-11-20T19:00:01.001+09:00", byDays: -20) == "2026-10-31T19:00:01.001+09:00")
        #expect(FixtureDay.moveDate("2028-02-28T23:59:59Z", byDays: 1) == "2028-02-29T23:59:59Z")
        #expect(FixtureDay.moveDate("2026-11-20T10:00:00.000Z", byDays: 0) == "2026-11-20T10:00:00.000Z")
        for broken in ["yesterday", "2026-11-20", "2026-11-20T24:00:00Z", ""] {
            #expect(FixtureDay.moveDate(broken, byDays: 400) == broken, "an invalid case's value stays invalid")
        }
    }

    @Test func onlyTimesUnderKeysEndingInAtMoveAnywhereInTheJSON() throws {
        let json: [String: Any] = ["reports": [["occurred_at": "2026-11-20T10:00:00Z", "screen": "2026-11-20T10:00:00Z",
                                                "nested": ["started_at": "2026-11-20T09:00:00Z"]]], "at": "2026-11-20T10:00:00Z"]
        let moved = try #require(FixtureDay.moveDates(in: json, byDays: 3) as? [String: Any])
        let report = try #require((moved["reports"] as? [[String: Any]])?.first)
        #expect(report["occurred_at"] as? String == "2026-11-23T10:00:00Z")
        #expect(report["screen"] as? String == "2026-11-20T10:00:00Z", "client text that looks like a date is left as sent")
        #expect((report["nested"] as? [String: Any])?["started_at"] as? String == "2026-11-23T09:00:00Z")
        #expect(moved["at"] as? String == "2026-11-20T10:00:00Z")
    }

    @Test func theFixtureReportsHappenThreeDaysBeforeTodayWithTheirSpacingKept() throws {
        let raw = try #require((try JSONSerialization.jsonObject(with: Data(contentsOf: Fixtures.directory.appendingPathComponent("reports/valid-batch.json"))) as? [String: Any])?["reports"] as? [[String: Any]])
        let loaded = try Fixtures.validReports()
        func times(_ reports: [[String: Any]]) -> [Int64] { reports.compactMap { ($0["occurred_at"] as? String).flatMap(Timestamp.parseMilliseconds) } }
        let before = times(raw), after = times(loaded)
        #expect(before.count == 50 && after.count == 50)
        #expect(zip(before, after).allSatisfy { $1 - $0 == after[0] - before[0] }, "every report moved by the same amount")
        #expect((after[0] - before[0]) % 86_400_000 == 0, "by whole days: hours of day are kept")
        #expect(after.allSatisfy { FixtureDay(containing: $0) == FixtureDay.reports })
        let today = FixtureDay(containing: WatchdogServer.systemClock())
        #expect(FixtureDay.today == today || FixtureDay.today == today.adding(days: -1), "the day the run started (or the day before, past midnight)")
        #expect(FixtureDay.reports == FixtureDay.today.adding(days: -3))
        let session = Fixtures.session()
        #expect(session["started_at"] as? String == FixtureDay.reports.at(9))
    }

    @Test func aDayBeforeTheEpochIsTheDayThatHoldsTheInstant() {
        #expect(FixtureDay(containing: 0).date == "1970-01-01")
        #expect(FixtureDay(containing: -1).date == "1969-12-31")
        #expect(FixtureDay(containing: -86_400_000).date == "1969-12-31")
        #expect(FixtureDay(containing: 86_399_999).adding(days: 1).written(9, 30) == "1970-01-02T09:30:00.000Z")
        #expect(FixtureDay(containing: 0).at(23, 59, 59) == "1970-01-01T23:59:59Z")
    }
}
