import Foundation
import WatchdogWire

/// A keyboard-dependent view the watchdog checks: where it should be and where it is, in
/// window coordinates, and how to put it back.
public struct WatchedView {
    /// The view's name in reports (`composeToolbar`).
    public var name: String
    /// The screen it belongs to, if any (`ComposeViewController`).
    public var screen: String?
    /// Where the view belongs, in window coordinates (`nil`: not checked now).
    public var expectedFrame: () -> Frame?
    /// Where the view is, in window coordinates (`nil`: not checked now).
    public var actualFrame: () -> Frame?
    /// The host's fix, called when `auto_fix` is on: it should change what lays the view out
    /// (a constraint's constant, a safe-area inset) — a frame set by hand is undone by the next
    /// Auto Layout pass. The next tick checks the view again: the report says `auto_fixed` only
    /// when the view is then where it belongs.
    public var autoFix: (() -> Void)?

    /// A view to watch; the frames are asked for at every tick.
    public init(name: String, screen: String? = nil, expectedFrame: @escaping () -> Frame?, actualFrame: @escaping () -> Frame?, autoFix: (() -> Void)? = nil) {
        self.name = name
        self.screen = screen
        self.expectedFrame = expectedFrame
        self.actualFrame = actualFrame
        self.autoFix = autoFix
    }
}

/// What has the keyboard focus.
public enum FirstResponder: Equatable {
    /// Nothing, in this window or elsewhere: a keyboard on screen is a glitch.
    case none
    /// An input view in the window: its frame, and — when the view can tell (`UITextInput`) —
    /// the caret or selected-text rect, both in window coordinates. Coverage is judged on the
    /// caret when known, so a full-height text view is not "covered" while the caret is above
    /// the keyboard.
    case input(Frame, caret: Frame?)
    /// A first responder that is not a view in this window: a view controller (or other
    /// responder) with its own `inputView`/`inputAccessoryView`, or a text field in another
    /// window (an alert). The keyboard has a reason to be up; its coverage is not ours to judge.
    case outsideWindow

    /// An input view whose caret is not known.
    public static func input(_ frame: Frame) -> FirstResponder { .input(frame, caret: nil) }
}

/// The layout watchdog: on each tick (when enabled, the app active, and no keyboard animation
/// running) it compares every watched view with its expected frame and checks the focused input
/// against the keyboard. A problem seen on two consecutive ticks is a glitch, reported once per
/// episode (until it goes away). On a glitch it reports (sampled) and with `test_crash` on,
/// crashes through the handler — after the report is on disk. With `auto_fix` on and a fix
/// supplied, it fixes first and reports on the next tick, once it has checked the fix held.
///
/// The keyboard geometry follows this app's own keyboard notifications whatever the app
/// state (a first responder restored in `willEnterForeground` or resigned in
/// `willResignActive` counts); another app's keyboard is ignored. Judging is separate: no
/// checks unless the app is active.
///
/// Not thread-safe: drive it from one thread (the main thread in an app).
public final class LayoutWatchdog {
    /// Seconds after a keyboard animation ends before frames are trusted again.
    public var animationMargin: Double = 0.3
    /// Clearance: an input (its caret, when known) closer than this to the keyboard's top
    /// already counts as covered (0: only an overlap counts).
    public var inputMargin: Double = 0
    /// Without a caret, an input counts as covered when less than this much of it (or of its
    /// height, if shorter) shows above the keyboard: a tall text or web view is not "covered"
    /// just because its bottom is under the keyboard.
    public var minimumVisibleInputHeight: Double = 44
    /// The remote config in force (tolerance, `auto_fix`, `test_crash`, …).
    public var config = WatchdogConfig()
    /// The app's state: checks run only while `active`.
    public var appState: AppState = .active {
        didSet {
            if appState != .active { episodes.removeAll() }
            if oldValue == .active, appState != .active {
                keyboardWhenActive = keyboard
                heardUnattributedWhileInactive = false
            } else if oldValue != .active, appState == .active, let saved = keyboardWhenActive {
                // Only for notifications that do not say whose keyboard they are (before iOS 9,
                // old traces): back in front, the app's keyboard is what it had when it left.
                if heardUnattributedWhileInactive { keyboard = saved }
                keyboardWhenActive = nil
            }
        }
    }
    private var keyboardWhenActive: KeyboardTracker?
    private var heardUnattributedWhileInactive = false
    /// The key window's frame in screen coordinates (change it through `windowChanged`, which
    /// also re-evaluates the keyboard).
    public var window: Frame
    /// Whose the last keyboard notification of this app was, as far as this window goes
    /// (`KeyboardRouting`): its own, another window's of the app on the same screen (nothing is
    /// judged here until the keyboard hides or comes back: where a view of a window without the
    /// first responder belongs under another window's keyboard is not known), or on another
    /// screen (it covers nothing here).
    public private(set) var keyboardOwner: KeyboardOwner = .thisWindow
    /// The window's bottom safe-area inset without the keyboard (the UIKit driver keeps it
    /// current): where `ViewExpectation.keyboardTop` and `.safeAreaBottom` put a view's bottom.
    public var safeAreaBottom: Double = 0
    /// Who reports: app, release, device, install and session.
    public var context: ReportContext
    /// The screen a report names when the watched view does not say.
    public var screen: String?
    /// The focused input; `nil` when the app does not tell (the input checks are skipped).
    public var firstResponder: (() -> FirstResponder)?
    /// The input language, e.g. `ja-JP`.
    public var inputMode: (() -> String?)?
    /// Today's test crashes of this install: `test_crash` stops at the budget or after expiry
    /// even with a stale cached config.
    public var testCrashLedger = TestCrashLedger(file: nil)
    /// Whether this build may crash on purpose at all, whatever the remote config says (false
    /// by default): the agent sets it from `WatchdogSettings.allowsTestCrash` and the build's
    /// distribution (never in an App Store build).
    public var allowsTestCrash = false

    /// The keyboard as the notifications heard so far place it.
    public private(set) var keyboard: KeyboardTracker
    /// Points the keyboard covers at this window's bottom now (0 when hidden, floating, or
    /// another window's or screen's).
    public var keyboardCoverage: Double { keyboard.current?.height ?? 0 }
    private var lastKeyboardEvent: KeyboardEvent?
    private var animationEndsAt: Double = -.infinity
    private var views: [Int: WatchedView] = [:]
    private var nextViewID = 0
    private var episodes: [String: Episode] = [:]
    /// Glitches fixed on the last tick, reported once the next tick has checked the fix.
    private var pendingFixes: [String: Report] = [:]

    private let sink: ReportSink
    private let logger: TaggedLogger
    private let clock: () -> Double
    private let wallClock: () -> Date
    private let random: () -> Double
    private let crashHandler: (TestCrash) -> Void
    /// Called just before a `test_crash`, once its report is on disk: set the crash reporter's
    /// keys here (Crashlytics' `setCustomValue`, Sentry's `setTag`) so the crash names the report.
    public var beforeTestCrash: ((TestCrash) -> Void)?

    private struct Episode {
        var consecutive = 0
        var reported = false
    }

    /// - Parameters:
    ///   - context: who reports: app, release, device, install and session.
    ///   - window: the key window's frame in screen coordinates.
    ///   - idiom: the device family, for the keyboard geometry.
    ///   - sink: where reports are written (the outbox).
    ///   - logger: the log whose last lines go with every report.
    ///   - clock: monotonic seconds (inject a fake one in tests).
    ///   - wallClock: the time a report's `occurred_at` says.
    ///   - random: uniform in 0..<1, for `report_sample_rate`.
    ///   - crashHandler: what `test_crash` does; in an app, `fatalError(crash.message)`, so the
    ///     crash reporter collects the logs and the message names the report.
    public init(context: ReportContext, window: Frame, idiom: DeviceIdiom, sink: ReportSink, logger: TaggedLogger,
                clock: @escaping () -> Double, wallClock: @escaping () -> Date = Date.init,
                random: @escaping () -> Double = { Double.random(in: 0..<1) },
                crashHandler: @escaping (TestCrash) -> Void) {
        self.context = context
        self.window = window
        self.keyboard = KeyboardTracker(idiom: idiom)
        self.sink = sink
        self.logger = logger.child("watchdog")
        self.clock = clock
        self.wallClock = wallClock
        self.random = random
        self.crashHandler = crashHandler
    }

    /// Starts watching a view; returns a token for `unwatch`.
    @discardableResult
    public func watch(_ view: WatchedView) -> Int {
        nextViewID += 1
        views[nextViewID] = view
        return nextViewID
    }

    /// Stops watching the view `watch` returned `token` for (a SwiftUI view that disappeared).
    public func unwatch(_ token: Int) {
        if let view = views.removeValue(forKey: token) { episodes.removeValue(forKey: "view:\(view.name)") }
    }

    /// Feeds a keyboard notification, whatever the app state: this app's own keyboard keeps
    /// the geometry current (the checks wait for the app to be active); another app's
    /// (`isLocal == false`) is logged and ignored. `owner` says whose keyboard it is for this
    /// window (`KeyboardRouting`, when the app has several windows): a hide always counts here;
    /// another window's or another screen's keyboard leaves this window without one.
    public func keyboardEvent(_ event: KeyboardEvent, owner: KeyboardOwner = .thisWindow) {
        guard event.isLocal != false else {
            logger.child("tracker").log("\(event.kind.rawValue): another app's keyboard, ignored (\(appState.rawValue))")
            return
        }
        if owner != .thisWindow, !event.kind.isHide {
            if keyboardOwner != owner { episodes.removeAll() }
            keyboardOwner = owner
            keyboard.reset(window: window)
            keyboardWhenActive = nil
            logger.child("tracker").log("\(event.kind.rawValue): \(owner == .anotherScreen ? "on another screen" : "another window's keyboard"), not this window's (\(appState.rawValue))")
            return
        }
        keyboardOwner = .thisWindow
        if appState == .active || event.isLocal == true {
            keyboardWhenActive = nil
        } else {
            heardUnattributedWhileInactive = true
        }
        let geometry = keyboard.handle(event, window: window)
        lastKeyboardEvent = event
        animationEndsAt = clock() + event.animationDuration
        logger.child("tracker").log("\(event.kind.rawValue): calculated height - \(geometry.height) mode \(geometry.mode.rawValue) (\(appState.rawValue))")
    }

    /// The window moved or resized (Stage Manager, Split View ↔ Slide Over, rotation) — no
    /// keyboard notification needed: re-evaluates the keyboard geometry for the new frame (in
    /// screen coordinates). Frames are trusted again after `animationDuration` plus the margin.
    public func windowChanged(_ frame: Frame, animationDuration: Double = 0) {
        window = frame
        keyboardWhenActive?.windowChanged(frame)
        if let geometry = keyboard.windowChanged(frame) {
            logger.child("tracker").log("window changed to \(Int(frame.width))x\(Int(frame.height)): calculated height - \(geometry.height) mode \(geometry.mode.rawValue)")
        }
        animationEndsAt = max(animationEndsAt, clock() + animationDuration)
    }

    /// One check. Call it every `config.watchdogIntervalS` seconds.
    public func tick() {
        guard config.enabled, appState == .active else { return }
        let now = clock()
        guard now >= animationEndsAt + animationMargin, keyboardOwner != .anotherWindow else {
            episodes.removeAll()
            return
        }
        verifyPendingFixes()
        var failing: [String: () -> Report] = [:]
        for view in views.values {
            guard let expected = view.expectedFrame(), let actual = view.actualFrame() else { continue }
            if Self.differs(expected, actual, tolerance: config.frameTolerancePt) {
                failing["view:\(view.name)"] = { [unowned self] in
                    var report = makeReport(kind: "view_frame_mismatch", screen: view.screen)
                    report.view = ViewFrames(name: view.name, expected: expected, actual: actual, tolerance: config.frameTolerancePt)
                    logger.log("woof: \(view.name) expected y \(expected.y), actual y \(actual.y)")
                    return report
                }
            }
        }
        let keyboardHeight = keyboardCoverage
        if let responder = firstResponder?(), keyboardHeight > 0 {
            let keyboardTop = window.height - keyboardHeight
            switch responder {
            case .input(let frame, let caret):
                if let caret, caret.maxY + inputMargin > keyboardTop {
                    failing["input_covered"] = { [unowned self] in
                        logger.log("input covered: caret maxY \(caret.maxY) below keyboard top \(keyboardTop)")
                        return makeReport(kind: "input_covered_by_keyboard", screen: screen)
                    }
                } else if caret == nil, keyboardTop - inputMargin - frame.minY < min(frame.height, minimumVisibleInputHeight) {
                    failing["input_covered"] = { [unowned self] in
                        logger.log("input covered: \(max(0, keyboardTop - frame.minY)) pt of it above keyboard top \(keyboardTop)")
                        return makeReport(kind: "input_covered_by_keyboard", screen: screen)
                    }
                }
            case .none:
                failing["keyboard_without_input"] = { [unowned self] in
                    logger.log("keyboard shown (height \(keyboardHeight)) with no input focused")
                    return makeReport(kind: "keyboard_without_input", screen: screen)
                }
            case .outsideWindow:
                break
            }
        }
        for key in episodes.keys where failing[key] == nil { episodes.removeValue(forKey: key) }
        for (key, makeGlitchReport) in failing.sorted(by: { $0.key < $1.key }) {
            var episode = episodes[key] ?? Episode()
            episode.consecutive += 1
            if episode.consecutive >= 2, !episode.reported {
                episode.reported = true
                episodes[key] = episode
                glitch(key: key, makeGlitchReport())
            } else {
                episodes[key] = episode
            }
        }
    }

    /// The view of an episode key (`view:<name>`).
    private func watchedView(for key: String) -> WatchedView? {
        guard key.hasPrefix("view:") else { return nil }
        return views.values.first { "view:\($0.name)" == key }
    }

    private func glitch(key: String, _ report: Report) {
        if config.autoFix, let view = watchedView(for: key), let fix = view.autoFix {
            fix()
            logger.log("auto-fix applied to \(view.name); checking it on the next tick")
            pendingFixes[key] = report
            return
        }
        deliver(report, action: ClientAction(autoFixed: false, testCrash: false))
    }

    /// Reports the glitches fixed on the last tick, saying whether each fix held.
    private func verifyPendingFixes() {
        for (key, report) in pendingFixes.sorted(by: { $0.key < $1.key }) {
            pendingFixes.removeValue(forKey: key)
            var report = report
            let outcome: String
            if let view = watchedView(for: key), let expected = view.expectedFrame(), let actual = view.actualFrame() {
                outcome = Self.differs(expected, actual, tolerance: config.frameTolerancePt) ? "did_not_hold" : "held"
            } else {
                outcome = "unverified"
            }
            logger.log("auto-fix of \(report.view?.name ?? report.kind) \(outcome == "held" ? "held" : outcome == "did_not_hold" ? "did not hold" : "could not be checked")")
            var attributes = report.attributes ?? [:]
            attributes[Self.autoFixAttribute] = outcome
            report.attributes = attributes
            deliver(report, action: ClientAction(autoFixed: outcome == "held", testCrash: false))
        }
    }

    /// The report attribute saying how an auto-fix went: `held`, `did_not_hold` (the view was
    /// not where it belongs on the next tick; `auto_fixed` is false) or `unverified`.
    public static let autoFixAttribute = "auto_fix"

    private func deliver(_ report: Report, action: ClientAction) {
        var report = report
        var action = action
        guard random() < config.reportSampleRate else {
            logger.log("glitch \(report.kind) not reported (sample rate \(config.reportSampleRate))")
            return
        }
        let crash = allowsTestCrash && testCrashLedger.allows(config, at: wallClock())
        action.testCrash = crash
        report.action = action
        if config.testCrash, !allowsTestCrash {
            logger.log("test_crash is on but this build does not allow it (WatchdogSettings.allowsTestCrash, not in an App Store build): not crashing")
        }
        // The report records that it crashed, and how the crash names it.
        if crash { logger.log("test_crash is on: crashing once this report is saved: \(TestCrash(reportID: report.id, kind: report.kind).message)") }
        report.logs = logger.recentLines()
        guard crash else {
            // Written off this thread: nothing waits for it.
            sink.enqueue(report)
            if config.testCrash, allowsTestCrash { logger.log("test_crash is on but expired or over today's budget (\(config.testCrashBudget)): not crashing") }
            return
        }
        do {
            // The crash waits for the report: written now, after everything before it.
            try sink.persist(report)
        } catch {
            logger.log("could not save report \(report.id), kept for a later try: \(error)")
            // Not on disk: no crash; the copy kept says so.
            report.action?.testCrash = false
            report.logs = Array((report.logs ?? []).dropLast())
            sink.keepForRetry(report)
            return
        }
        let testCrash = TestCrash(reportID: report.id, kind: report.kind)
        testCrashLedger.record(at: wallClock())
        beforeTestCrash?(testCrash)
        crashHandler(testCrash)
    }

    func makeReport(kind: String, screen: String?) -> Report {
        var report = Report(
            id: TimeOrderedID.make(), kind: kind, occurredAt: rfc3339(wallClock()), app: context.app,
            release: context.release, device: context.device, sessionId: context.sessionID, installId: context.installID,
            appState: appState.rawValue, screen: screen ?? self.screen, window: window
        )
        if let geometry = keyboard.current {
            report.keyboard = KeyboardState(
                visible: geometry.height > 0, frame: geometry.frameInWindow, mode: geometry.mode.rawValue, height: geometry.height,
                animationDuration: lastKeyboardEvent?.animationDuration, animationCurve: lastKeyboardEvent?.animationCurve,
                inputMode: inputMode?(), notification: lastKeyboardEvent?.kind.rawValue)
        }
        return report
    }

    static func differs(_ a: Frame, _ b: Frame, tolerance: Double) -> Bool {
        abs(a.x - b.x) > tolerance || abs(a.y - b.y) > tolerance || abs(a.width - b.width) > tolerance || abs(a.height - b.height) > tolerance
    }
}
