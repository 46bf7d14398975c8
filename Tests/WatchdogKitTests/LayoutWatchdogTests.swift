import Foundation
import Testing
import WatchdogKit
import WatchdogWire

/// The layout and interaction-lock watchdogs, driven by a fake clock.
@Suite struct LayoutWatchdogTests {
    final class Harness {
        var now = 0.0
        var actualY = 500.0
        var fixes = 0
        var crashes: [Bool] = []
        /// What each crash said, and the hook calls before it (in order).
        var crashEvents: [String] = []
        let outbox: Outbox
        let watchdog: LayoutWatchdog
        let window = Frame(x: 0, y: 0, width: 390, height: 844)

        init(config: WatchdogConfig = WatchdogConfig()) throws {
            outbox = try Outbox(directory: FileManager.default.temporaryDirectory.appendingPathComponent("wk-\(UUID())"))
            let context = ReportContext(app: "com.example.mail", release: Release(version: "14.2.0", build: "31245"), device: Device(model: "iPhone15,2", idiom: "phone"), installID: "I-1")
            var clockNow: () -> Double = { 0 }
            var crash: (TestCrash) -> Void = { _ in }
            watchdog = LayoutWatchdog(context: context, window: window, idiom: .phone, sink: outbox, logger: TaggedLogger(tag: "keyboard"),
                                      clock: { clockNow() }, crashHandler: { crash($0) })
            clockNow = { [unowned self] in now }
            crash = { [unowned self] in
                crashes.append(outbox.count(.reports) > 0)
                crashEvents.append("crash: \($0.message)")
            }
            watchdog.config = config
            watchdog.allowsTestCrash = true
            watchdog.watch(WatchedView(name: "composeToolbar", screen: "ComposeViewController",
                                       expectedFrame: { [unowned self] in Frame(x: 0, y: window.height - (watchdog.keyboard.current?.height ?? 0) - 44, width: 390, height: 44) },
                                       actualFrame: { [unowned self] in Frame(x: 0, y: actualY, width: 390, height: 44) },
                                       autoFix: { [unowned self] in fixes += 1; actualY = window.height - (watchdog.keyboard.current?.height ?? 0) - 44 }))
        }

        func showKeyboard(height: Double, duration: Double = 0.25) {
            watchdog.keyboardEvent(KeyboardEvent(kind: .willShow, frameBegin: Frame(x: 0, y: 844, width: 390, height: height),
                                                 frameEnd: Frame(x: 0, y: 844 - height, width: 390, height: height), animationDuration: duration, animationCurve: 7))
        }

        func tick(after seconds: Double = 1) {
            now += seconds
            watchdog.tick()
        }

        func reports() throws -> [Report] {
            try outbox.pending(.reports, limit: 500, maxBytes: 1 << 30).map { try JSONDecoder().decode(Report.self, from: $0.json) }
        }
    }

    /// Frames are in flux while the keyboard animates: a mismatch then is not a glitch. Once the
    /// animation is over, the same mismatch is one.
    @Test func aMismatchDuringTheKeyboardAnimationIsNotReportedButOneThatOutlastsItIs() throws {
        let harness = try Harness()
        harness.actualY = 844 - 44  // where it belongs without a keyboard
        harness.tick()
        harness.showKeyboard(height: 336, duration: 5)  // a long animation: frames are in flux
        harness.actualY = 500
        harness.tick(after: 1)
        harness.tick(after: 1)
        harness.tick(after: 1)
        #expect(try harness.reports().isEmpty, "three ticks of mismatch inside the 5 s animation")
        harness.actualY = 844 - 336 - 44  // the animation ends with the view in place
        harness.tick(after: 3)
        harness.tick(after: 1)
        #expect(try harness.reports().isEmpty)
        harness.actualY = 500  // displaced after the animation: a glitch
        harness.tick()
        harness.tick()
        #expect(try harness.reports().count == 1)
    }

    @Test func aPersistingMismatchIsReportedOncePerEpisode() throws {
        let harness = try Harness()
        harness.showKeyboard(height: 252)
        harness.actualY = 844 - 216 - 44  // still placed for the English keyboard
        harness.tick()
        #expect(try harness.reports().isEmpty, "one tick is not a glitch yet")
        for _ in 0..<5 { harness.tick() }
        let reports = try harness.reports()
        #expect(reports.count == 1)
        let report = try #require(reports.first)
        #expect(report.kind == "view_frame_mismatch")
        #expect(report.view?.name == "composeToolbar")
        #expect(report.view?.expected.y == 548.0)
        #expect(report.view?.actual.y == 584.0)
        #expect(report.keyboard?.height == 252)
        #expect(report.keyboard?.mode == "docked")
        #expect(report.screen == "ComposeViewController")
        #expect(report.logs?.contains { $0.hasPrefix("[keyboard][watchdog][tracker] keyboardWillShow: calculated height - 252.0") } == true)
        #expect(report.action == ClientAction(autoFixed: false, testCrash: false))
        #expect(try ReportValidator(nowMilliseconds: Int64(Date().timeIntervalSince1970 * 1000)).validate(report).report.id == report.id)

        harness.actualY = 844 - 252 - 44  // fixed: the episode ends
        harness.tick()
        harness.actualY = 100  // a new episode
        harness.tick()
        harness.tick()
        #expect(try harness.reports().count == 2)
    }

    @Test func autoFixIsCalledAndRecorded() throws {
        var config = WatchdogConfig()
        config.autoFix = true
        let harness = try Harness(config: config)
        harness.showKeyboard(height: 216)
        harness.tick()
        harness.tick()
        #expect(harness.fixes == 1)
        #expect(try harness.reports().isEmpty, "reported once the fix is checked")
        harness.tick()
        let report = try #require(try harness.reports().first)
        #expect(report.action?.autoFixed == true)
        #expect(report.attributes?[LayoutWatchdog.autoFixAttribute] == "held")
        #expect(report.view?.actual.y == 500, "where it was when the glitch was seen")
        harness.tick()
        harness.tick()
        #expect(harness.fixes == 1, "fixed: no new episode")
        #expect(try harness.reports().count == 1)
    }

    /// A fix that sets a frame Auto Layout undoes: the view is back on the next tick.
    @Test func aFixThatDidNotHoldIsReportedAsSuchAndNotAsAutoFixed() throws {
        var config = WatchdogConfig()
        config.autoFix = true
        config.testCrash = true
        let harness = try Harness(config: config)
        let wrongY = harness.actualY
        var afterLayoutPass: [() -> Void] = []
        harness.watchdog.unwatch(1)
        harness.watchdog.watch(WatchedView(name: "composeToolbar", screen: "ComposeViewController",
                                           expectedFrame: { Frame(x: 0, y: 844 - (harness.watchdog.keyboard.current?.height ?? 0) - 44, width: 390, height: 44) },
                                           actualFrame: { Frame(x: 0, y: harness.actualY, width: 390, height: 44) },
                                           autoFix: {
                                               harness.fixes += 1
                                               harness.actualY = 844 - 216 - 44
                                               afterLayoutPass.append { harness.actualY = wrongY }  // constraints win
                                           }))
        harness.showKeyboard(height: 216)
        harness.tick()
        harness.tick()
        #expect(harness.fixes == 1)
        afterLayoutPass.forEach { $0() }
        #expect(harness.crashes.isEmpty, "no report yet, so no crash")
        harness.tick()
        let reports = try harness.reports()
        #expect(reports.count == 1)
        #expect(reports.first?.action == ClientAction(autoFixed: false, testCrash: true))
        #expect(reports.first?.attributes?[LayoutWatchdog.autoFixAttribute] == "did_not_hold")
        #expect(reports.first?.logs?.contains("[keyboard][watchdog] auto-fix of composeToolbar did not hold") == true)
        #expect(harness.crashes == [true], "test_crash after the report is on disk")
        for _ in 0..<3 { harness.tick() }
        #expect(harness.fixes == 1, "one fix per episode")
        #expect(try harness.reports().count == 1)
    }

    @Test func sampleRateZeroReportsNothingAndDisabledChecksNothing() throws {
        var config = WatchdogConfig()
        config.reportSampleRate = 0
        config.testCrash = true
        let harness = try Harness(config: config)
        harness.showKeyboard(height: 216)
        for _ in 0..<4 { harness.tick() }
        #expect(try harness.reports().isEmpty)
        #expect(harness.crashes.isEmpty, "no crash without a report")

        var off = WatchdogConfig()
        off.enabled = false
        let disabled = try Harness(config: off)
        disabled.showKeyboard(height: 216)
        for _ in 0..<4 { disabled.tick() }
        #expect(try disabled.reports().isEmpty)
    }

    @Test func inputCoveredAndKeyboardWithoutInputAreDetected() throws {
        let harness = try Harness()
        harness.actualY = 844 - 216 - 44
        var responder = FirstResponder.input(Frame(x: 0, y: 700, width: 390, height: 40))
        harness.watchdog.firstResponder = { responder }
        harness.showKeyboard(height: 216)
        harness.tick()
        harness.tick()
        #expect(try harness.reports().map(\.kind) == ["input_covered_by_keyboard"])
        responder = .none
        harness.tick()
        harness.tick()
        #expect(try harness.reports().map(\.kind).sorted() == ["input_covered_by_keyboard", "keyboard_without_input"])
    }

    /// A compose body as tall as the screen: the caret decides, not the view's frame.
    @Test func aFullHeightTextViewIsCoveredOnlyWhenItsCaretIs() throws {
        let harness = try Harness()
        harness.actualY = 844 - 336 - 44
        let body = Frame(x: 0, y: 100, width: 390, height: 744)
        var caret = Frame(x: 16, y: 200, width: 2, height: 20)
        harness.watchdog.firstResponder = { .input(body, caret: caret) }
        harness.showKeyboard(height: 336)
        for _ in 0..<3 { harness.tick() }
        #expect(try harness.reports().isEmpty, "caret at y 200, keyboard top at 508: nothing hidden")
        caret = Frame(x: 16, y: 600, width: 2, height: 20)  // typed down to under the keyboard
        harness.tick()
        harness.tick()
        #expect(try harness.reports().map(\.kind) == ["input_covered_by_keyboard"])
        #expect(try harness.reports().first?.logs?.last == "[keyboard][watchdog] input covered: caret maxY 620.0 below keyboard top 508.0")
    }

    /// Without a caret (a web view, a custom input), enough of the view above the keyboard is fine.
    @Test func withoutACaretATallInputCountsAsCoveredOnlyWhenLittleOfItShows() throws {
        let harness = try Harness()
        harness.actualY = 844 - 336 - 44
        var frame = Frame(x: 0, y: 100, width: 390, height: 744)
        harness.watchdog.firstResponder = { .input(frame) }
        harness.showKeyboard(height: 336)
        for _ in 0..<3 { harness.tick() }
        #expect(try harness.reports().isEmpty, "408 pt of the web view show above the keyboard")
        frame = Frame(x: 0, y: 480, width: 390, height: 364)  // 28 pt show
        harness.tick()
        harness.tick()
        #expect(try harness.reports().map(\.kind) == ["input_covered_by_keyboard"])
    }

    /// A view controller with an input accessory view, or a text field in an alert's window:
    /// the keyboard has its reason, even though no view in this window is first responder.
    @Test func aResponderOutsideTheWindowIsNotAKeyboardWithoutInput() throws {
        let harness = try Harness()
        harness.actualY = 844 - 216 - 44
        var responder = FirstResponder.outsideWindow
        harness.watchdog.firstResponder = { responder }
        harness.showKeyboard(height: 216)
        for _ in 0..<4 { harness.tick() }
        #expect(try harness.reports().isEmpty)
        responder = .none
        harness.tick()
        harness.tick()
        #expect(try harness.reports().map(\.kind) == ["keyboard_without_input"])
    }

    @Test func aLongInteractionLockIsReportedOnceWithFlagsAndRecovered() throws {
        let outbox = try Outbox(directory: FileManager.default.temporaryDirectory.appendingPathComponent("wk-\(UUID())"))
        var now = 0.0
        var recovered: [[String: Bool]] = []
        let context = ReportContext(app: "com.example.mail", release: Release(version: "14.2.0", build: "1"), device: Device(idiom: "phone"), installID: "I-1")
        let lock = InteractionLockWatchdog(context: context, sink: outbox, logger: TaggedLogger(tag: "navigation"), clock: { now })
        lock.recover = { recovered.append($0) }
        lock.begin(flags: ["is_bar_pop_processing": true])
        now = 5
        lock.tick()
        #expect(outbox.count(.reports) == 0)
        now = 10.5
        lock.tick()
        now = 12
        lock.tick()
        lock.end()
        #expect(outbox.count(.reports) == 1)
        #expect(recovered == [["is_bar_pop_processing": true]])
        let report = try JSONDecoder().decode(Report.self, from: try #require(outbox.pending(.reports, limit: 1, maxBytes: 1 << 20).first).json)
        #expect(report.lock?.durationS == 10.5)
        #expect(report.lock?.flags == ["is_bar_pop_processing": true])

        lock.begin(flags: [:])  // a short lock: nothing
        now = 14
        lock.end()
        #expect(outbox.count(.reports) == 1)
    }

    @Test func timeInTheBackgroundDoesNotCountAsALock() throws {
        let outbox = try Outbox(directory: FileManager.default.temporaryDirectory.appendingPathComponent("wk-\(UUID())"))
        var now = 0.0
        let context = ReportContext(app: "com.example.mail", release: Release(version: "14.2.0", build: "1"), device: Device(idiom: "phone"), installID: "I-1")
        let lock = InteractionLockWatchdog(context: context, sink: outbox, logger: TaggedLogger(tag: "navigation"), clock: { now })
        lock.begin(flags: ["is_bar_push_processing": true])
        now = 2
        lock.appState = .background
        now = 60
        lock.tick()
        lock.appState = .active
        now = 63
        lock.tick()
        lock.end()
        #expect(outbox.count(.reports) == 0, "5 s of active time, not 63")
        lock.begin(flags: [:])
        now = 70
        lock.appState = .inactive
        now = 200
        lock.appState = .active
        now = 75 + 130
        lock.tick()
        #expect(outbox.count(.reports) == 1, "7 + 5 s active: over the 10 s threshold")
    }

    @Test func theTaggedLoggerKeepsTheLastLinesWithTheirTags() {
        let root = TaggedLogger(tag: "keyboard", capacity: 3)
        let tracker = root.child("tracker")
        for index in 0..<5 { tracker.log("line \(index)") }
        root.log("root")
        #expect(root.recentLines() == ["[keyboard][tracker] line 3", "[keyboard][tracker] line 4", "[keyboard] root"])
        tracker.log(String(repeating: "é", count: 2000))
        #expect(root.recentLines().last!.utf8.count <= 1024)
    }
}
