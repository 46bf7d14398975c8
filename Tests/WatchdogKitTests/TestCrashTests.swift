import Foundation
import Testing
import WatchdogKit
import WatchdogWire

/// `test_crash`: only after the report is on disk, within the daily budget and before expiry,
/// with a message naming the report and the host's hook first.
@Suite struct TestCrashTests {
    @Test func testCrashRunsOnlyAfterTheReportIsOnDisk() throws {
        var config = WatchdogConfig()
        config.testCrash = true
        let harness = try LayoutWatchdogTests.Harness(config: config)
        harness.showKeyboard(height: 216)
        harness.tick()
        #expect(harness.crashes.isEmpty)
        harness.tick()
        #expect(harness.crashes == [true], "the crash handler ran, and the report file existed when it did")
        #expect(try harness.reports().first?.action?.testCrash == true)
    }

    /// The crash names its report (id and kind) and the host's hook runs first, with the
    /// report on disk: a crash in Crashlytics or Sentry can be matched with the report.
    @Test func aTestCrashNamesItsReportAndTheHookRunsBeforeIt() throws {
        var config = WatchdogConfig()
        config.testCrash = true
        let harness = try LayoutWatchdogTests.Harness(config: config)
        harness.watchdog.beforeTestCrash = { [unowned harness] crash in
            harness.crashEvents.append("hook: \(crash.reportID) \(crash.kind) on disk \(harness.outbox.contains(id: crash.reportID))")
        }
        harness.showKeyboard(height: 216)
        harness.tick()
        harness.tick()
        let report = try #require(try harness.reports().first)
        #expect(harness.crashEvents == [
            "hook: \(report.id) view_frame_mismatch on disk true",
            "crash: Watchdog test_crash: report \(report.id) (view_frame_mismatch); the report with this id in Watchdog has the logs",
        ])
        // The report says it crashed, and with which message.
        #expect(report.action?.testCrash == true)
        #expect(report.logs?.last?.hasSuffix("crashing once this report is saved: \(TestCrash(reportID: report.id, kind: report.kind).message)") == true)
        // And the server takes it as it is (log line length, fields).
        #expect(throws: Never.self) { try ReportValidator(nowMilliseconds: Int64(Date().timeIntervalSince1970 * 1000)).validate(report) }
    }

    @Test func testCrashStopsAtTheDailyBudgetAndAfterExpiryEvenWithAStaleConfig() throws {
        var config = WatchdogConfig()
        config.testCrash = true
        config.testCrashBudget = 1
        let harness = try LayoutWatchdogTests.Harness(config: config)
        harness.showKeyboard(height: 216)
        harness.tick()
        harness.tick()
        #expect(harness.crashes.count == 1)
        harness.actualY = 844 - 216 - 44  // fixed, then a new episode
        harness.tick()
        harness.actualY = 100
        harness.tick()
        harness.tick()
        #expect(harness.crashes.count == 1, "budget used: the second glitch is reported without a crash")
        #expect(try harness.reports().map { $0.action?.testCrash } == [true, false])

        var expired = WatchdogConfig()
        expired.testCrash = true
        expired.testCrashExpiresAt = Timestamp.format(milliseconds: Int64(Date().timeIntervalSince1970 * 1000) - 86_400_000)
        let late = try LayoutWatchdogTests.Harness(config: expired)
        late.showKeyboard(height: 216)
        late.tick()
        late.tick()
        #expect(late.crashes.isEmpty)
    }
}
