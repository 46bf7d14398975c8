import Foundation
import WatchdogWire

/// A keyboard-dependent view the watchdog checks: where it should be and where it is, in
/// window coordinates, and how to put it back.
public struct WatchedView {
    public var name: String
    public var screen: String?
    public var expectedFrame: () -> Frame?
    public var actualFrame: () -> Frame?
    /// Moves the view to its expected frame (called when `auto_fix` is on).
    public var autoFix: (() -> Void)?

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
    case none
    /// An input view, its frame in window coordinates.
    case input(Frame)
}

/// The layout watchdog: on each tick (when enabled, the app active, and no keyboard animation
/// running) it compares every watched view with its expected frame and checks the focused input
/// against the keyboard. A problem seen on two consecutive ticks is a glitch, reported once per
/// episode (until it goes away). On a glitch it reports (sampled), auto-fixes (if switched on),
/// and with `test_crash` on, crashes through the handler — after the report is on disk.
///
/// Not thread-safe: drive it from one thread (the main thread in an app).
public final class LayoutWatchdog {
    /// Seconds after a keyboard animation ends before frames are trusted again.
    public var animationMargin: Double = 0.3
    /// Points an input may reach into the keyboard before it counts as covered.
    public var inputMargin: Double = 0
    public var config = WatchdogConfig()
    public var appState: AppState = .active {
        didSet {
            if appState != .active { episodes.removeAll() }
            if oldValue == .active, appState != .active {
                keyboardWhenActive = keyboard
            } else if oldValue != .active, appState == .active, let saved = keyboardWhenActive {
                // While inactive the app receives other apps' keyboard notifications; back in
                // front, its own keyboard is what it had until it hears otherwise.
                keyboard = saved
                keyboardWhenActive = nil
            }
        }
    }
    private var keyboardWhenActive: KeyboardTracker?
    /// The key window's frame in screen coordinates.
    public var window: Frame
    public var context: ReportContext
    public var screen: String?
    /// The focused input; `nil` when the app does not tell (the input checks are skipped).
    public var firstResponder: (() -> FirstResponder)?
    /// The input language, e.g. `ja-JP`.
    public var inputMode: (() -> String?)?
    /// Today's test crashes of this install: `test_crash` stops at the budget or after expiry
    /// even with a stale cached config.
    public var testCrashLedger = TestCrashLedger(file: nil)

    public private(set) var keyboard: KeyboardTracker
    private var lastKeyboardEvent: KeyboardEvent?
    private var animationEndsAt: Double = -.infinity
    private var views: [Int: WatchedView] = [:]
    private var nextViewID = 0
    private var episodes: [String: Episode] = [:]

    private let sink: ReportSink
    private let logger: TaggedLogger
    private let clock: () -> Double
    private let wallClock: () -> Date
    private let random: () -> Double
    private let crashHandler: () -> Void

    private struct Episode {
        var consecutive = 0
        var reported = false
    }

    /// - Parameters:
    ///   - clock: monotonic seconds (inject a fake one in tests).
    ///   - random: uniform in 0..<1, for `report_sample_rate`.
    ///   - crashHandler: what `test_crash` does; in an app, `fatalError`, so the crash reporter collects the logs.
    public init(context: ReportContext, window: Frame, idiom: DeviceIdiom, sink: ReportSink, logger: TaggedLogger,
                clock: @escaping () -> Double, wallClock: @escaping () -> Date = Date.init,
                random: @escaping () -> Double = { Double.random(in: 0..<1) },
                crashHandler: @escaping () -> Void) {
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

    public func unwatch(_ token: Int) {
        if let view = views.removeValue(forKey: token) { episodes.removeValue(forKey: "view:\(view.name)") }
    }

    /// Feeds a keyboard notification (even while inactive: the geometry stays current, the
    /// checks wait for the app to be active again).
    public func keyboardEvent(_ event: KeyboardEvent) {
        if appState == .active { keyboardWhenActive = nil }
        let geometry = keyboard.handle(event, window: window)
        lastKeyboardEvent = event
        animationEndsAt = clock() + event.animationDuration
        logger.child("tracker").log("\(event.kind.rawValue): calculated height - \(geometry.height) mode \(geometry.mode.rawValue) (\(appState.rawValue))")
    }

    /// One check. Call it every `config.watchdogIntervalS` seconds.
    public func tick() {
        guard config.enabled, appState == .active else { return }
        let now = clock()
        guard now >= animationEndsAt + animationMargin else {
            episodes.removeAll()
            return
        }
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
        let keyboardHeight = keyboard.current?.height ?? 0
        if let responder = firstResponder?(), keyboardHeight > 0 {
            switch responder {
            case .input(let frame) where frame.maxY + inputMargin > window.height - keyboardHeight:
                failing["input_covered"] = { [unowned self] in
                    logger.log("input covered: maxY \(frame.maxY) below keyboard top \(window.height - keyboardHeight)")
                    return makeReport(kind: "input_covered_by_keyboard", screen: screen)
                }
            case .none:
                failing["keyboard_without_input"] = { [unowned self] in
                    logger.log("keyboard shown (height \(keyboardHeight)) with no input focused")
                    return makeReport(kind: "keyboard_without_input", screen: screen)
                }
            default:
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
                glitch(makeGlitchReport(), fix: key.hasPrefix("view:") ? views.values.first { "view:\($0.name)" == key }?.autoFix : nil)
            } else {
                episodes[key] = episode
            }
        }
    }

    private func glitch(_ report: Report, fix: (() -> Void)?) {
        var report = report
        var action = ClientAction(autoFixed: false, testCrash: false)
        if config.autoFix, let fix {
            fix()
            action.autoFixed = true
            logger.log("auto-fixed \(report.view?.name ?? report.kind)")
        }
        guard random() < config.reportSampleRate else {
            logger.log("glitch \(report.kind) not reported (sample rate \(config.reportSampleRate))")
            return
        }
        let crash = testCrashLedger.allows(config, at: wallClock())
        action.testCrash = crash
        report.action = action
        report.logs = logger.recentLines()
        do {
            try sink.persist(report)
        } catch {
            logger.log("could not save report \(report.id): \(error)")
            return
        }
        if crash {
            logger.log("test_crash is on: crashing on purpose after saving report \(report.id)")
            testCrashLedger.record(at: wallClock())
            crashHandler()
        } else if config.testCrash {
            logger.log("test_crash is on but expired or over today's budget (\(config.testCrashBudget)): not crashing")
        }
    }

    func makeReport(kind: String, screen: String?) -> Report {
        var report = Report(
            id: UUID().uuidString.lowercased(), kind: kind, occurredAt: rfc3339(wallClock()), app: context.app,
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
