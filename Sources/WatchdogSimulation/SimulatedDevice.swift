import Foundation
import WatchdogKit
import WatchdogWire

/// One simulated install running a real `WatchdogAgent` — tracker, watchdogs, outbox, uploader,
/// config client and their sync order — fed with keyboard notifications, view positions, app
/// switches, iPad Split View (window changes, the other app's keyboard), hardware keyboards with
/// an input accessory view, navigation locks the host reports and transitions that never
/// complete (found by automatic lock detection, as the UIKit driver feeds it).
/// Its clock runs as fast as the simulation does. On the main actor, like the agent it drives
/// (as in an app): devices take turns there, their uploads run concurrently off it.
///
/// The watched toolbar sits where a correct app puts it — following the app's *own* keyboard
/// only — plus an offset when the simulation injects a glitch, so every report beyond the
/// injected glitches and locks would be a false one.
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
    private var window: Frame
    private var crashed = false
    private var viewOffset = 0.0
    /// The height of this app's own keyboard, as the app itself knows it.
    private var ownKeyboardHeight = 0.0
    private var expected = 0
    private var expectedHardware = 0
    private var expectedAutomatic = 0
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
        window = screen
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
        agent = WatchdogAgent(settings: settings, window: window, clock: { clock.now }, transport: transport, crashHandler: { _ in crash() })
        crash = { [unowned self] in crashed = true }
        let refused = refused
        agent.setDeliveryStatusHandler { status in
            if case .ingestKeyRefused = status { refused.set() }
        }
        agent.layout.watch(WatchedView(
            name: "composeToolbar", screen: Self.screens[index % Self.screens.count],
            expectedFrame: { [unowned self] in Frame(x: 0, y: window.height - (agent.layout.keyboard.current?.height ?? 0) - 44, width: window.width, height: 44) },
            actualFrame: { [unowned self] in Frame(x: 0, y: window.height - ownKeyboardHeight - 44 + viewOffset, width: window.width, height: 44) },
            autoFix: { [unowned self] in viewOffset = 0 }))
    }

    /// Runs `count` sessions and delivers everything; returns what was produced.
    func run(sessions count: Int, deadline: Date) async -> FleetResult {
        var result = FleetResult()
        let name = ReleaseName.of(releasePlan.release)
        await agent.syncNow()
        result.configVersions.insert(agent.config.current.version)
        if agent.config.current.autoFix { result.devicesWithAutoFix = 1 }
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
        result.undelivered = agent.outbox.count(.reports) + agent.outbox.count(.sessions)
        return result
    }

    private func runSession() {
        let japanese = device.locale == "ja_JP" && random.unit() < 0.6
        let height: Double = device.idiom == "pad" ? 264 : japanese ? 252 : 216
        // iPads show the shortcut bar and the 44 pt accessory, iPhones only the accessory.
        hardwareVisible = random.unit() < plan.hardwareKeyboardProbability ? (device.idiom == "pad" ? 99 : 44) : nil
        agent.setAppState(.active)
        showOwn(height)
        tick(2)
        if random.unit() < releasePlan.glitchProbability * (agent.config.current.autoFix ? plan.autoFixGlitchFactor : 1) {
            // The view keeps the English keyboard's place under a taller one, say.
            viewOffset = 36
            expected += 1
            if hardwareVisible != nil { expectedHardware += 1 }
            tick(3)
            viewOffset = 0
        }
        // A push that completes within a tick: not a lock.
        runTransition(.push, ticks: 1)
        if !crashed, device.idiom == "pad", random.unit() < plan.splitViewProbability {
            // Into Split View: the window narrows without a keyboard notification. The user
            // taps a field in the other app: this app's keyboard hides (its own notification),
            // the other app's comes and goes (is_local false) — and changes nothing here.
            window = Frame(x: 0, y: 0, width: (screen.width * 2 / 3).rounded(), height: screen.height)
            agent.windowChanged(window)
            tick(2)
            hideOwn(height)
            agent.keyboardEvent(show(353, local: false))
            tick(2)
            agent.keyboardEvent(hide(353, local: false))
            showOwn(height)
            tick(2)
            window = screen
            agent.windowChanged(window)
            tick(2)
        }
        if !crashed, random.unit() < plan.appSwitchProbability {
            agent.setAppState(.inactive)
            hideOwn(height)  // resigned in willResignActive: its own notification, while inactive
            agent.setAppState(.background)
            agent.keyboardEvent(show(291, local: false))  // another app's keyboard
            tick(3)
            agent.setAppState(.inactive)
            showOwn(height, duration: 0)  // restored in willEnterForeground
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

    /// This app's keyboard comes up: the software one (`height`), or this session's hardware
    /// keyboard — the software frame plus the 44 pt accessory, mostly below the screen.
    private func showOwn(_ height: Double, duration: Double = 0.25) {
        if let visible = hardwareVisible {
            agent.keyboardEvent(KeyboardEvent(kind: .willShow, frameBegin: Frame(x: 0, y: screen.height, width: screen.width, height: height + 44),
                                              frameEnd: Frame(x: 0, y: screen.height - visible, width: screen.width, height: height + 44),
                                              animationDuration: duration, animationCurve: 7, isLocal: true, screen: screen))
            ownKeyboardHeight = visible
            return
        }
        agent.keyboardEvent(show(height, local: true, duration: duration))
        ownKeyboardHeight = height
    }

    /// A navigation transition whose coordinator the driver sees for `ticks` ticks.
    private func runTransition(_ kind: LockObservation.Transition, ticks: Int) {
        transitions += 1
        transition = LockObservation(transition: kind, interactive: kind == .pop, identity: transitions, screen: "ThreadViewController")
        tick(ticks)
        transition = .clear
    }

    private func hideOwn(_ height: Double) {
        agent.keyboardEvent(hide(height, local: true))
        ownKeyboardHeight = 0
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
