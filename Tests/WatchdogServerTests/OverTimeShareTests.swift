import Foundation
import GRDB
import Testing
import WatchdogTesting

/// Over time plots the share of sessions with a glitch (issue 44, point 4): sessions first
/// affected in a day over the sessions started that day, per release and per kind, on both
/// stores; day 0 is kept once a release has 50 sessions.
@Suite struct OverTimeShareTests {
    static let app = VerdictTests.app

    static func report(_ version: String, _ build: String, _ session: String, kind: String = "view_frame_mismatch", at time: String) throws -> [String: Any] {
        var report = try Fixtures.freshReport(version: version, build: build, kind: kind, sessionID: session)
        report["occurred_at"] = time
        return report
    }

    static func lines(_ app: TestApplication, _ token: String, kind: String? = nil) throws -> [[String: Any]] {
        let response = try app.client.request("GET", "\(Self.app)/overlay?base=14.1.0&target=14.2.0&bucket=day\(kind.map { "&kind=\($0)" } ?? "")", token: token)
        #expect(response.status == 200, "\(response.text)")
        return try #require(response.json["releases"] as? [[String: Any]])
    }

    static func prefix<T>(_ line: [String: Any], _ key: String, _ count: Int = 2, as: T.Type) -> [T?] {
        ((line[key] as? [Any]) ?? []).prefix(count).map { $0 as? T }
    }

    @Test func theOverlayAndTheTimeSeriesGiveTheShareOfSessionsFirstAffectedEachDay() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let (baseDay, targetDay, base, target) = try VerdictTests.twoReleasesTenDaysApart(app, key: key)
        try VerdictTests.post(app, key: key, [
            // Base day 0: three reports from two sessions (one of them with two kinds).
            try Self.report("14.1.0", "1", base[0], at: baseDay.at(12, 30)),
            try Self.report("14.1.0", "1", base[0], kind: "keyboard_without_input", at: baseDay.at(12, 40)),
            try Self.report("14.1.0", "1", base[1], at: baseDay.at(12, 31)),
            // Base day 1: a session of day 0 glitching again is not newly affected; one of day 1 is.
            try Self.report("14.1.0", "1", base[1], kind: "keyboard_without_input", at: baseDay.adding(days: 1).at(12, 30)),
            try Self.report("14.1.0", "1", base[10], at: baseDay.adding(days: 1).at(12, 30)),
            try Self.report("14.2.0", "2", target[10], at: targetDay.adding(days: 1).at(12, 30)),
        ])
        let lines = try Self.lines(app, viewer)
        #expect(Self.prefix(lines[0], "affected_sessions", as: Int.self) == [2, 1])
        #expect(Self.prefix(lines[0], "shares", as: Double.self) == [0.2, 0.1], "2 of 10 sessions, then 1 of 10")
        #expect(Self.prefix(lines[0], "rates", as: Double.self) == [300, 200], "reports per 1k stay beside the share")
        #expect(Self.prefix(lines[1], "shares", as: Double.self) == [0, 0.1])
        #expect(lines.map { $0["affected_sessions_without_hour"] as? Int } == [0, 0])
        #expect(lines.map { $0["aligned_start_kept"] as? Bool } == [false, false], "20 sessions: day 0 may still move")

        // Of one kind: a session is affected in the day of its first report of that kind.
        let keyboard = try Self.lines(app, viewer, kind: "keyboard_without_input")
        #expect(Self.prefix(keyboard[0], "shares", as: Double.self) == [0.1, 0.1], "base[0] on day 0, base[1] first of that kind on day 1")

        let series = try app.client.request("GET", "\(Self.app)/timeseries?release=14.1.0&bucket=day&from=\(baseDay.date)&to=\(baseDay.adding(days: 1).date)", token: viewer)
        #expect(series.status == 200, "\(series.text)")
        #expect(series.json["affected_sessions"] as? [Int] == [2, 1])
        let shares = try #require(series.json["shares"] as? [String: [Any]])
        #expect(shares["view_frame_mismatch"]?.map { $0 as? Double } == [0.2, 0.1])
        #expect(shares["keyboard_without_input"]?.map { $0 as? Double } == [0.1, 0.1])
    }

    @Test func dayZeroIsKeptOnceTheReleaseHasFiftySessions() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let targetDay = FixtureDay.reports, baseDay = targetDay.adding(days: -10)
        _ = try VerdictTests.sessions(app, key: key, version: "14.1.0", build: "1", count: 60, startedAt: baseDay.at(12))
        _ = try VerdictTests.sessions(app, key: key, version: "14.2.0", build: "2", count: 40, startedAt: targetDay.at(12))
        var lines = try Self.lines(app, viewer)
        #expect(lines.map { $0["aligned_start"] as? String } == [baseDay.written(), targetDay.written()])
        #expect(lines.map { $0["aligned_start_kept"] as? Bool } == [true, false], "60 sessions keep day 0; 40 do not yet")

        // Many late uploads dated two days earlier: the computed bulk would now start there.
        _ = try VerdictTests.sessions(app, key: key, version: "14.1.0", build: "1", count: 200, startedAt: baseDay.adding(days: -2).at(12))
        _ = try VerdictTests.sessions(app, key: key, version: "14.2.0", build: "2", count: 200, startedAt: targetDay.adding(days: -2).at(12))
        lines = try Self.lines(app, viewer)
        #expect(lines[0]["aligned_start"] as? String == baseDay.written(), "the kept day 0 stays")
        #expect(lines[0]["sessions_before_start"] as? Int == 200, "and what is dated before it is counted under the chart")
        #expect(Self.prefix(lines[0], "sessions", 1, as: Int.self) == [60])
        #expect(lines[1]["aligned_start"] as? String == targetDay.adding(days: -2).written(), "not kept before 50 sessions: it moved")
        #expect(lines[1]["aligned_start_kept"] as? Bool == true, "and is kept from now on")
        try app.restart()
        #expect(try Self.lines(app, viewer)[0]["aligned_start"] as? String == baseDay.written(), "kept in the store")
    }
}

/// A data dir from before the hourly affected sessions: what was counted before has no hour,
/// and the overlay says how many instead of showing a share too low.
@Suite(.enabled(if: TestStore.isSQLite, "migrates SQLite data dirs")) struct OverTimeShareMigrationTests {
    @Test func affectedSessionsCountedBeforeTheMigrationAreShownAsWithoutAnHour() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let targetDay = FixtureDay.reports, baseDay = targetDay.adding(days: -10)
        let base = try VerdictTests.sessions(app, key: key, version: "14.1.0", build: "1", count: 10, startedAt: baseDay.at(12))
        let target = try VerdictTests.sessions(app, key: key, version: "14.2.0", build: "2", count: 10, startedAt: targetDay.at(12))
        try VerdictTests.post(app, key: key, [try OverTimeShareTests.report("14.1.0", "1", base[0], at: baseDay.at(12, 30)),
                                              try OverTimeShareTests.report("14.1.0", "1", base[1], at: baseDay.at(12, 30))])
        try app.stop()
        let queue = try DatabaseQueue(path: try app.sqlite.path)
        try queue.write { try OldSchema.undoHourlyAffected($0) }
        try queue.close()
        try app.restart()
        try VerdictTests.post(app, key: key, [try OverTimeShareTests.report("14.2.0", "2", target[0], at: targetDay.at(12, 30))])
        let lines = try OverTimeShareTests.lines(app, viewer)
        #expect(lines.map { $0["affected_sessions_without_hour"] as? Int } == [2, 0])
        #expect(OverTimeShareTests.prefix(lines[0], "shares", 1, as: Double.self) == [0], "nothing backfilled")
        #expect(OverTimeShareTests.prefix(lines[1], "shares", 1, as: Double.self) == [0.1], "counted from the migration on")
    }
}
