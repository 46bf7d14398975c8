import WatchdogServer
import WatchdogWire

/// A UTC day of the tests' calendar, which moves with the clock the tests run on.
///
/// A daemon compares the times it is sent with its own clock: the hourly timeseries covers the
/// last seven days, admission holds apart sessions that started more than 192 hours before they
/// arrived, retention prunes what is older than its days, alert watches read the last hours. A
/// test that sends a fixed date therefore passes in the week it was written and fails after.
/// Tests name their days instead: `FixtureDay.reports` is the day the fixture reports happened,
/// three days before the day the test process started, and other days are counted from it
/// (`FixtureDay.reports.adding(days: -10).at(12, 30)`). The fixture files' own dates are moved
/// by whole days to the same calendar when loaded (`moveDates(in:)`), so their spacing, hours
/// of day and day boundaries are kept: a bucket a test expects at 09:00 is still at 09:00.
///
/// Three days back leaves room on both sides: the latest day a test uses (two days after the
/// reports) is still yesterday, so nothing is in the future of a clock read just before
/// midnight, and the earliest (ten days before) is still inside every window a test reads it
/// through. The day is read once per process, so a run that crosses midnight keeps one calendar.
public struct FixtureDay: Sendable, Hashable {
    /// Days since 1970-01-01, UTC.
    public let number: Int64

    static let millisecondsPerDay: Int64 = 86_400_000

    /// The UTC day that holds `milliseconds` (since the epoch).
    public init(containing milliseconds: Int64) {
        number = milliseconds >= 0 ? milliseconds / Self.millisecondsPerDay : (milliseconds + 1) / Self.millisecondsPerDay - 1
    }

    /// The UTC day the test process first asked for a fixture day on.
    public static let today = FixtureDay(containing: WatchdogServer.systemClock())

    /// The day the fixture reports happened: three days before `today`.
    public static var reports: FixtureDay { today.adding(days: -3) }

    /// The day the fixture files were written for (their reports' `occurred_at`). Only used to
    /// tell how many days to move those files' dates; never sent to a daemon as it is.
    static let authoredReportsDay = FixtureDay(containing: Timestamp.parseMilliseconds("2026-11-20T00:00:00Z")!)

    /// The day `days` later (earlier when negative).
    public func adding(days: Int) -> FixtureDay {
        FixtureDay(number: number + Int64(days))
    }

    private init(number: Int64) {
        self.number = number
    }

    /// Milliseconds since the epoch at `hour:minute:second` UTC of this day.
    public func milliseconds(_ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Int64 {
        number * Self.millisecondsPerDay + Int64(hour * 3_600 + minute * 60 + second) * 1_000
    }

    /// The time as a client sends it: `YYYY-MM-DDTHH:MM:SSZ`.
    public func at(_ hour: Int, _ minute: Int = 0, _ second: Int = 0) -> String {
        String(Timestamp.format(milliseconds: milliseconds(hour, minute, second)).prefix(19)) + "Z"
    }

    /// The time as the server writes it (`Timestamp.format`): `YYYY-MM-DDTHH:MM:SS.000Z`.
    public func written(_ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> String {
        Timestamp.format(milliseconds: milliseconds(hour, minute, second))
    }

    /// The date alone, `YYYY-MM-DD`, as the series' `from` and `to` take a day.
    public var date: String {
        String(Timestamp.format(milliseconds: milliseconds()).prefix(10))
    }

    /// `json` (as `JSONSerialization` reads it) with every RFC 3339 time under a key ending in
    /// `_at` moved by whole days from the fixture files' calendar to this one, written as it
    /// was (fraction and offset kept).
    public static func moveDates(in json: Any) -> Any {
        moveDates(in: json, byDays: reports.number - authoredReportsDay.number)
    }

    static func moveDates(in json: Any, byDays days: Int64) -> Any {
        switch json {
        case let object as [String: Any]:
            var moved = object
            for (key, value) in object {
                if key.hasSuffix("_at"), let text = value as? String {
                    moved[key] = moveDate(text, byDays: days)
                } else {
                    moved[key] = moveDates(in: value, byDays: days)
                }
            }
            return moved
        case let array as [Any]:
            return array.map { moveDates(in: $0, byDays: days) }
        default:
            return json
        }
    }

    /// `text` with its date moved by `days`, or as it was when it is no RFC 3339 time (an
    /// invalid-case fixture's deliberately broken value stays broken).
    static func moveDate(_ text: String, byDays days: Int64) -> String {
        guard Timestamp.parseMilliseconds(text) != nil, let local = Timestamp.parseMilliseconds(String(text.prefix(10)) + "T00:00:00Z") else { return text }
        return FixtureDay(containing: local).adding(days: Int(days)).date + text.dropFirst(10)
    }
}
