import Foundation
import WatchdogKit
import WatchdogWire

/// One simulated install running a real `WatchdogAgent` — tracker, watchdogs, outbox, uploader,
/// config client and their sync order — fed with keyboard notifications, view positions, app
/// switches and navigation locks. Its clock runs as fast as the simulation does.
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
    private let window: Frame
    private var crashed = false
    private var viewOffset = 0.0

    init(index: Int, plan: FleetPlan, endpoint: URL, ingestKey: String, directory: URL) throws {
        self.plan = plan
        // A device runs one release; the fleet spreads devices over the releases.
        releasePlan = plan.releases[index % plan.releases.count]
        random = SeededGenerator(seed: plan.seed &* 1_000_003 &+ UInt64(index))
        (device, window) = Self.models[index % Self.models.count]
        let clock = SimulatedClock()
        self.clock = clock
        var settings = WatchdogSettings(endpoint: endpoint, ingestKey: ingestKey, app: plan.app, release: releasePlan.release, device: device,
                                        idiom: DeviceIdiom(rawValue: device.idiom ?? "phone") ?? .phone, storageDirectory: directory,
                                        installID: "sim-\(plan.seed)-\(index)")
        settings.configRefreshInterval = 60
        settings.maximumBackoff = plan.maximumBackoff
        var crash: () -> Void = {}
        agent = try WatchdogAgent(settings: settings, window: window, clock: { clock.now }, crashHandler: { crash() })
        crash = { [unowned self] in crashed = true }
        agent.layout.watch(WatchedView(
            name: "composeToolbar", screen: Self.screens[index % Self.screens.count],
            expectedFrame: { [unowned self] in Frame(x: 0, y: window.height - (agent.layout.keyboard.current?.height ?? 0) - 44, width: window.width, height: 44) },
            actualFrame: { [unowned self] in Frame(x: 0, y: window.height - (agent.layout.keyboard.current?.height ?? 0) - 44 + viewOffset, width: window.width, height: 44) },
            autoFix: { [unowned self] in viewOffset = 0 }))
    }

    /// Runs `count` sessions and delivers everything; returns what was produced.
    func run(sessions count: Int, deadline: Date) async -> FleetResult {
        var result = FleetResult()
        let name = ReleaseName.of(releasePlan.release)
        await agent.syncNow()
        for index in 0..<count {
            agent.startSession()
            result.sessions[name, default: 0] += 1
            runSession()
            if crashed {
                result.testCrashes += 1
                crashed = false
            }
            if (index + 1) % plan.uploadEvery == 0 { await agent.syncNow() }
            if plan.sessionPause > 0 { try? await Task.sleep(nanoseconds: UInt64(plan.sessionPause * 1e9)) }
        }
        while Date() < deadline, agent.outbox.count(.reports) + agent.outbox.count(.sessions) > 0 {
            clock.advance(1)
            await agent.syncNow()
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
        result.reports[name] = agent.reportsSaved
        result.undelivered = agent.outbox.count(.reports) + agent.outbox.count(.sessions)
        return result
    }

    private func runSession() {
        let japanese = device.locale == "ja_JP" && random.unit() < 0.6
        let height: Double = device.idiom == "pad" ? 264 : japanese ? 252 : 216
        agent.setAppState(.active)
        agent.keyboardEvent(show(height))
        tick(2)
        if random.unit() < releasePlan.glitchProbability {
            // The view keeps the English keyboard's place under a taller one, say.
            viewOffset = 36
            tick(3)
            viewOffset = 0
        }
        if !crashed, random.unit() < plan.appSwitchProbability {
            agent.setAppState(.inactive)
            agent.keyboardEvent(hide(height))
            agent.setAppState(.background)
            agent.keyboardEvent(show(291))  // another app's keyboard
            tick(3)
            agent.setAppState(.active)
            agent.keyboardEvent(show(height, duration: 0))
            tick(2)
        }
        if !crashed, random.unit() < plan.lockProbability {
            agent.locks.begin(flags: ["is_bar_pop_processing": true, "is_transition_controller_processing": random.unit() < 0.5])
            tick(12)
            agent.locks.end()
        }
        agent.keyboardEvent(hide(height))
        tick(1)
    }

    private func tick(_ times: Int) {
        for _ in 0..<times {
            clock.advance(agent.config.current.watchdogIntervalS)
            agent.check()
        }
    }

    private func show(_ height: Double, duration: Double = 0.25) -> KeyboardEvent {
        KeyboardEvent(kind: .willShow, frameBegin: Frame(x: 0, y: window.height, width: window.width, height: height),
                      frameEnd: Frame(x: 0, y: window.height - height, width: window.width, height: height), animationDuration: duration, animationCurve: 7)
    }

    private func hide(_ height: Double) -> KeyboardEvent {
        KeyboardEvent(kind: .willHide, frameBegin: Frame(x: 0, y: window.height - height, width: window.width, height: height),
                      frameEnd: Frame(x: 0, y: window.height, width: window.width, height: height), animationDuration: 0.25, animationCurve: 7)
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
