import Foundation
import WatchdogKit
import WatchdogWire

/// One simulated install running a real `WatchdogAgent` — tracker, watchdogs, outbox, uploader,
/// config client and their sync order — fed with keyboard notifications, view positions, app
/// switches, iPad Split View (window changes, the other app's keyboard), hardware keyboards with
/// an input accessory view, navigation locks the host reports and transitions that never
/// complete (found by automatic lock detection, as the UIKit driver feeds it). Some compose
/// screens sit in a tab bar controller, and some iPads run two windows of the app side by side,
/// one scene each, every keyboard notification reaching both (`SimulatedWindow`).
/// Its clock runs as fast as the simulation does. On the main actor, like the agent it drives
/// (as in an app): devices take turns there, their uploads run concurrently off it.
///
/// The watched toolbar sits where a correct app puts it — following its window's *own* keyboard
/// only, above the tab bar while the keyboard is down — plus an offset when the simulation
/// injects a glitch, so every report beyond the injected glitches and locks would be a false one.
@MainActor
final class SimulatedDevice {
    private static let models: [(Device, Frame)] = [
        (Device(model: "iPhone15,2", os: "iOS", osVersion: "18.1", idiom: "phone", locale: "ja_JP"), Frame(x: 0, y: 0, width: 393, height: 852)),
        (Device(model: "iPhone12,1", os: "iOS", osVersion: "17.6", idiom: "phone", locale: "en_US"), Frame(x: 0, y: 0, width: 414, height: 896)),
        (Device(model: "iPad8,1", os: "iPadOS", osVersion: "17.4", idiom: "pad", locale: "en_GB"), Frame(x: 0, y: 0, width: 768, height: 1024)),
    ]
    private static let screens = ["ComposeViewController", "ReplyViewController", "SearchViewController"]

    private let plan: FleetPlan
    private let releasePlan: FleetPlan.ReleasePlan
    private var random: SeededGenerator
    private let agent: WatchdogAgent
    private let clock: SimulatedClock
    private let device: Device
    private let screen: Frame
    /// The app's windows: one, or two side by side on some iPads; the first is the main scene's.
    private var windows: [SimulatedWindow] = []
    private var main: SimulatedWindow { windows[0] }
    private var crashed = false
    private var expected = 0
    private var expectedHardware = 0
    private var expectedAutomatic = 0
    private var expectedViews = 0
    /// What shows of a hardware keyboard this session (shortcut bar and/or accessory), `nil`
    /// for the software keyboard.
    private var hardwareVisible: Double?
    /// What the UIKit driver would observe now: a transition in progress, or nothing.
    private var transition = LockObservation.clear
    private var transitions = 0
    private let keys: KeyCoordinator
    private let refused = RefusalFlag()

    init(index: Int, plan: FleetPlan, endpoint: URL, keys: KeyCoordinator, directory: URL, transport: any HTTPTransport) async throws {
        self.plan = plan
        // A device runs one release; the fleet spreads devices over the releases.
        releasePlan = plan.releases[index % plan.releases.count]
        random = SeededGenerator(seed: (plan.seed &* 1_000_003 &+ UInt64(index)) ^ (plan.variation &* 0x9E37_79B9_7F4A_7C15))
        (device, screen) = Self.models[index % Self.models.count]
        self.keys = keys
        let clock = SimulatedClock()
        self.clock = clock
        var settings = WatchdogSettings(endpoint: endpoint, ingestKey: await keys.key, app: plan.app, release: releasePlan.release, device: device,
                                        idiom: DeviceIdiom(rawValue: device.idiom ?? "phone") ?? .phone, storageDirectory: directory,
                                        installID: "sim-\(plan.seed)-\(index)")
        settings.configRefreshInterval = 60
        settings.maximumBackoff = plan.maximumBackoff
        settings.appAttest = plan.appAttest
        // Beta testers' builds: the only kind that may crash on purpose.
        settings.allowsTestCrash = true
        settings.host = HostApp(distribution: .testFlight)
        var crash: () -> Void = {}
        agent = WatchdogAgent(settings: settings, window: screen, clock: { clock.now }, transport: transport, crashHandler: { _ in crash() })
        crash = { [unowned self] in crashed = true }
        let refused = refused
        agent.setDeliveryStatusHandler { status in
            if case .ingestKeyRefused = status { refused.set() }
        }
        let tabBar = random.unit() < plan.tabBarProbability
        let twoWindows = device.idiom == "pad" && random.unit() < plan.twoWindowProbability
        let bar = tabBar ? (device.idiom == "pad" ? 70.0 : 83.0) : 0
        let name = Self.screens[index % Self.screens.count]
        if twoWindows {
            let half = (screen.width / 2).rounded()
            windows = [SimulatedWindow(agent: agent, frame: Frame(x: 0, y: 0, width: half, height: screen.height), bottomBar: bar, screen: name, asksForFocus: true),
                       SimulatedWindow(agent: agent, frame: Frame(x: half, y: 0, width: screen.width - half, height: screen.height), bottomBar: bar,
                                       screen: name, asksForFocus: true)]
        } else {
            windows = [SimulatedWindow(agent: agent, frame: screen, bottomBar: bar, screen: name, asksForFocus: false)]
        }
    }

    /// Runs `count` sessions and delivers everything; returns what was produced.
    func run(sessions count: Int, deadline: Date) async -> FleetResult {
        var result = FleetResult()
        let name = ReleaseName.of(releasePlan.release)
        await agent.syncNow()
        result.configVersions.insert(agent.config.current.version)
        if agent.config.current.autoFix { result.devicesWithAutoFix = 1 }
        if main.bottomBar > 0 { result.devicesWithTabBar = 1 }
        if windows.count > 1 { result.devicesWithTwoWindows = 1 }
        for index in 0..<count {
            agent.startSession()
            result.sessions[name, default: 0] += 1
            runSession()
            if crashed {
                result.testCrashes += 1
                crashed = false
            }
            agent.setIngestKey(await keys.sessionDone())
            if (index + 1) % plan.uploadEvery == 0 { await agent.syncNow() }
            if plan.sessionPause > 0 { try? await Task.sleep(nanoseconds: UInt64(plan.sessionPause * 1e9)) }
        }
        while Date() < deadline, agent.outbox.count(.reports) + agent.outbox.count(.sessions) > 0 {
            clock.advance(1)
            agent.setIngestKey(await keys.key)
            await agent.syncNow()
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
        result.reports[name] = agent.reportsSaved
        result.expectedReports[name] = expected
        result.devicesRefused = refused.isSet ? 1 : 0
        result.expectedHardwareKeyboardReports = expectedHardware
        result.expectedAutomaticLockReports = expectedAutomatic
        result.expectedViewReports = expectedViews
        result.undelivered = agent.outbox.count(.reports) + agent.outbox.count(.sessions)
        return result
    }

    private func runSession() {
        let japanese = device.locale == "ja_JP" && random.unit() < 0.6
        let height: Double = device.idiom == "pad" ? 264 : japanese ? 252 : 216
        // iPads show the shortcut bar and the 44 pt accessory, iPhones only the accessory.
        hardwareVisible = random.unit() < plan.hardwareKeyboardProbability ? (device.idiom == "pad" ? 99 : 44) : nil
        // With two windows, the user types in one of them.
        var focused = windows[random.unit() < 0.5 ? 0 : windows.count - 1]
        agent.setAppState(.active)
        showOwn(height, in: focused)
        tick(2)
        maybeGlitch(in: focused)
        // A push that completes within a tick: not a lock.
        runTransition(.push, ticks: 1)
        if !crashed, windows.count > 1 {
            // The user taps the other window's field: the keyboard stays up and moves to it (a
            // frame change every window hears); the first window's composer goes down.
            focused = windows.first { $0 !== focused } ?? focused
            moveFocus(to: focused, height: height)
            tick(2)
            maybeGlitch(in: focused)
        }
        if !crashed, windows.count == 1, device.idiom == "pad", random.unit() < plan.splitViewProbability {
            // Into Split View: the window narrows without a keyboard notification. The user
            // taps a field in the other app: this app's keyboard hides (its own notification),
            // the other app's comes and goes (is_local false) — and changes nothing here.
            main.frame = Frame(x: 0, y: 0, width: (screen.width * 2 / 3).rounded(), height: screen.height)
            agent.windowChanged(main.frame)
            tick(2)
            hideOwn(height)
            deliver(show(353, local: false))
            tick(2)
            deliver(hide(353, local: false))
            showOwn(height, in: focused)
            tick(2)
            main.frame = screen
            agent.windowChanged(main.frame)
            tick(2)
        }
        if !crashed, random.unit() < plan.appSwitchProbability {
            agent.setAppState(.inactive)
            hideOwn(height)  // resigned in willResignActive: its own notification, while inactive
            agent.setAppState(.background)
            deliver(show(291, local: false))  // another app's keyboard
            tick(3)
            agent.setAppState(.inactive)
            showOwn(height, in: focused, duration: 0)  // restored in willEnterForeground
            agent.setAppState(.active)
            tick(2)
        }
        if !crashed, random.unit() < plan.lockProbability {
            agent.locks.begin(flags: ["is_bar_pop_processing": true, "is_transition_controller_processing": random.unit() < 0.5])
            expected += 1
            tick(12)
            agent.locks.end()
        }
        if !crashed, random.unit() < plan.automaticLockProbability {
            // A push whose completion never runs, or an interactive pop cancelled half-way:
            // the coordinator stays. Nothing tells the agent but what the driver observes.
            expected += 1
            expectedAutomatic += 1
            runTransition(random.unit() < 0.5 ? .push : .pop, ticks: 12)
        }
        hideOwn(height)
        tick(1)
    }

    /// With the release's chance, the focused window's composer keeps the English keyboard's
    /// place under a taller one, say: a real glitch, to be reported once.
    private func maybeGlitch(in window: SimulatedWindow) {
        guard !crashed, random.unit() < releasePlan.glitchProbability * (agent.config.current.autoFix ? plan.autoFixGlitchFactor : 1) else { return }
        window.viewOffset = 36
        expected += 1
        expectedViews += 1
        if hardwareVisible != nil { expectedHardware += 1 }
        tick(3)
        window.viewOffset = 0
    }

    /// Every window of the app hears every keyboard notification (the UIKit drivers do).
    private func deliver(_ event: KeyboardEvent) {
        for window in windows { agent.keyboardEvent(event, in: window.scene) }
    }

    /// This app's keyboard comes up in `window`: the software one (`height`), or this session's
    /// hardware keyboard — the software frame plus the 44 pt accessory, mostly below the screen.
    private func showOwn(_ height: Double, in window: SimulatedWindow, duration: Double = 0.25) {
        for other in windows { other.hasFocus = other === window }
        if let visible = hardwareVisible {
            deliver(KeyboardEvent(kind: .willShow, frameBegin: Frame(x: 0, y: screen.height, width: screen.width, height: height + 44),
                                  frameEnd: Frame(x: 0, y: screen.height - visible, width: screen.width, height: height + 44),
                                  animationDuration: duration, animationCurve: 7, isLocal: true, screen: screen))
        } else {
            deliver(show(height, local: true, duration: duration))
        }
        for other in windows { other.ownKeyboardHeight = other === window ? hardwareVisible ?? height : 0 }
    }

    /// The first responder moves to `window`'s field: the keyboard stays, a frame change.
    private func moveFocus(to window: SimulatedWindow, height: Double) {
        for other in windows { other.hasFocus = other === window }
        let frame = hardwareVisible.map { Frame(x: 0, y: screen.height - $0, width: screen.width, height: height + 44) }
            ?? Frame(x: 0, y: screen.height - height, width: screen.width, height: height)
        for kind in [KeyboardEvent.Kind.willChangeFrame, .didChangeFrame] {
            deliver(KeyboardEvent(kind: kind, frameBegin: frame, frameEnd: frame, animationDuration: 0, animationCurve: 7, isLocal: true, screen: screen))
        }
        for other in windows { other.ownKeyboardHeight = other === window ? hardwareVisible ?? height : 0 }
    }

    /// A navigation transition whose coordinator the driver sees for `ticks` ticks.
    private func runTransition(_ kind: LockObservation.Transition, ticks: Int) {
        transitions += 1
        transition = LockObservation(transition: kind, interactive: kind == .pop, identity: transitions, screen: "ThreadViewController")
        tick(ticks)
        transition = .clear
    }

    private func hideOwn(_ height: Double) {
        for window in windows { window.hasFocus = false }
        deliver(hide(height, local: true))
        for window in windows { window.ownKeyboardHeight = 0 }
    }

    private func tick(_ times: Int) {
        for _ in 0..<times {
            clock.advance(agent.config.current.watchdogIntervalS)
            agent.observeLocks(transition)
            agent.check()
        }
    }

    /// Keyboard frames are in screen coordinates and span the screen, whatever the window.
    private func show(_ height: Double, local: Bool, duration: Double = 0.25) -> KeyboardEvent {
        KeyboardEvent(kind: .willShow, frameBegin: Frame(x: 0, y: screen.height, width: screen.width, height: height),
                      frameEnd: Frame(x: 0, y: screen.height - height, width: screen.width, height: height), animationDuration: duration, animationCurve: 7,
                      isLocal: local, screen: screen)
    }

    private func hide(_ height: Double, local: Bool) -> KeyboardEvent {
        KeyboardEvent(kind: .willHide, frameBegin: Frame(x: 0, y: screen.height - height, width: screen.width, height: height),
                      frameEnd: Frame(x: 0, y: screen.height, width: screen.width, height: height), animationDuration: 0.25, animationCurve: 7,
                      isLocal: local, screen: screen)
    }
}

/// Set once from the uploader's task, read by the device.
final class RefusalFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    func set() {
        lock.lock()
        value = true
        lock.unlock()
    }
}

/// Simulated seconds, advanced by the simulation, read from any thread.
final class SimulatedClock: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 1_000.0

    var now: Double {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    func advance(_ seconds: Double) {
        lock.lock()
        value += seconds
        lock.unlock()
    }
}

/// `version (build)`, as the server names releases.
enum ReleaseName {
    static func of(_ release: Release) -> String { "\(release.version) (\(release.build))" }
}
