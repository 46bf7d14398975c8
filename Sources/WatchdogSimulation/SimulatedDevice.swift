import Foundation
import WatchdogKit
import WatchdogWire

/// One simulated install: WatchdogKit's real tracker, watchdogs, outbox, uploader and config
/// client, fed with keyboard traces, view positions, app switches and navigation locks.
/// Its own clock runs as fast as the simulation does; uploads use real time for backoff.
final class SimulatedDevice {
    private static let models: [(Device, Frame)] = [
        (Device(model: "iPhone15,2", os: "iOS", osVersion: "18.1", idiom: "phone", locale: "ja_JP"), Frame(x: 0, y: 0, width: 393, height: 852)),
        (Device(model: "iPhone12,1", os: "iOS", osVersion: "17.6", idiom: "phone", locale: "en_US"), Frame(x: 0, y: 0, width: 414, height: 896)),
        (Device(model: "iPad8,1", os: "iPadOS", osVersion: "17.4", idiom: "pad", locale: "en_GB"), Frame(x: 0, y: 0, width: 768, height: 1024)),
    ]
    private static let screens = ["ComposeViewController", "ReplyViewController", "SearchViewController"]

    private let plan: FleetPlan
    private let endpoint: URL
    private let ingestKey: String
    private var random: SeededRandom
    private let directory: URL
    private let outbox: Outbox
    private let uploader: Uploader
    private let config: RemoteConfigClient
    private let logger: TaggedLogger
    private let device: Device
    private let window: Frame
    private let installID: String
    private var now = 0.0

    init(index: Int, plan: FleetPlan, endpoint: URL, ingestKey: String, directory: URL) throws {
        self.plan = plan
        self.endpoint = endpoint
        self.ingestKey = ingestKey
        self.directory = directory
        random = SeededRandom(seed: plan.seed &* 1_000_003 &+ UInt64(index))
        (device, window) = Self.models[index % Self.models.count]
        installID = "sim-\(plan.seed)-\(index)"
        logger = TaggedLogger(tag: "keyboard")
        outbox = try Outbox(directory: directory.appendingPathComponent("outbox"))
        let started = DispatchTime.now().uptimeNanoseconds
        let realClock: @Sendable () -> Double = { Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }
        uploader = Uploader(outbox: outbox, endpoint: endpoint, ingestKey: ingestKey, clock: realClock, logger: logger, maximumBackoff: plan.maximumBackoff)
        let release = plan.releases[index % plan.releases.count].release
        config = RemoteConfigClient(endpoint: endpoint, app: plan.app, version: release.version, build: release.build, channel: release.channel,
                                    installID: installID, ingestKey: ingestKey, cacheFile: directory.appendingPathComponent("config.json"),
                                    clock: realClock, minimumInterval: 60, logger: logger)
    }

    /// Runs `count` sessions and delivers everything; returns what was produced.
    func run(sessions count: Int, deadline: Date) async -> FleetResult {
        var result = FleetResult()
        await config.refreshIfDue()
        for index in 0..<count {
            let releasePlan = plan.releases[Int(random.next() % UInt64(plan.releases.count))]
            runSession(releasePlan, into: &result)
            if (index + 1) % plan.uploadEvery == 0 { await uploader.drain() }
            if plan.sessionPause > 0 { try? await Task.sleep(nanoseconds: UInt64(plan.sessionPause * 1e9)) }
        }
        while Date() < deadline {
            if case .drained = await uploader.drain() { break }
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
        result.undelivered = outbox.count(.reports) + outbox.count(.sessions)
        return result
    }

    private func runSession(_ releasePlan: FleetPlan.ReleasePlan, into result: inout FleetResult) {
        let name = "\(releasePlan.release.version) (\(releasePlan.release.build))"
        let context = ReportContext(app: plan.app, release: releasePlan.release, device: device, installID: installID)
        let sink = CountingSink(outbox: outbox)
        var crashed = false
        let layout = LayoutWatchdog(context: context, window: window, idiom: DeviceIdiom(rawValue: device.idiom ?? "phone") ?? .phone, sink: sink,
                                    logger: logger, clock: { [unowned self] in now }, random: { [unowned self] in random.unit() },
                                    crashHandler: { crashed = true })
        layout.config = config.current
        layout.screen = Self.screens[Int(random.next() % UInt64(Self.screens.count))]
        let lock = InteractionLockWatchdog(context: context, sink: sink, logger: logger, clock: { [unowned self] in now })
        lock.config = config.current
        do {
            try outbox.persist(SessionStart(id: context.sessionID, installId: installID, startedAt: rfc3339Now(), app: plan.app, release: releasePlan.release, device: device))
            result.sessions[name, default: 0] += 1
        } catch {
            return
        }

        let japanese = device.locale == "ja_JP" && random.unit() < 0.6
        let height: Double = device.idiom == "pad" ? 264 : japanese ? 252 : 216
        var viewOffset = 0.0
        layout.watch(WatchedView(name: "composeToolbar", screen: layout.screen,
                                 expectedFrame: { [unowned layout, window] in Frame(x: 0, y: window.height - (layout.keyboard.current?.height ?? 0) - 44, width: window.width, height: 44) },
                                 actualFrame: { [unowned layout, window] in Frame(x: 0, y: window.height - (layout.keyboard.current?.height ?? 0) - 44 + viewOffset, width: window.width, height: 44) },
                                 autoFix: { viewOffset = 0 }))
        layout.keyboardEvent(show(height))
        tick(layout, lock, times: 2)
        if random.unit() < releasePlan.glitchProbability {
            // The view keeps the English keyboard's place under a taller one, say.
            viewOffset = 36
            tick(layout, lock, times: 3)
            viewOffset = 0
        }
        if !crashed, random.unit() < plan.appSwitchProbability {
            layout.appState = .inactive
            lock.appState = .inactive
            layout.keyboardEvent(hide(height))
            layout.appState = .background
            layout.keyboardEvent(show(291))  // another app's keyboard
            tick(layout, lock, times: 3)
            layout.appState = .active
            lock.appState = .active
            layout.keyboardEvent(show(height, duration: 0))
            tick(layout, lock, times: 2)
        }
        if !crashed, random.unit() < plan.lockProbability {
            lock.begin(flags: ["is_bar_pop_processing": true, "is_transition_controller_processing": random.unit() < 0.5])
            tick(layout, lock, times: 12)
            lock.end()
        }
        if crashed { result.testCrashes += 1 }
        result.reports[name, default: 0] += sink.count
    }

    private func tick(_ layout: LayoutWatchdog, _ lock: InteractionLockWatchdog, times: Int) {
        for _ in 0..<times {
            now += layout.config.watchdogIntervalS
            layout.tick()
            lock.tick()
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

    private func rfc3339Now() -> String {
        Timestamp.format(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
    }
}

/// Saves to the outbox and counts what it saved.
private final class CountingSink: ReportSink {
    let outbox: Outbox
    private(set) var count = 0

    init(outbox: Outbox) { self.outbox = outbox }

    func persist(_ report: Report) throws {
        try outbox.persist(report)
        count += 1
    }
}

/// SplitMix64: reproducible fleets.
struct SeededRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
