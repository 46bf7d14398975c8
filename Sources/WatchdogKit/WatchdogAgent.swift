import Locking
import Foundation
import WatchdogWire

/// Everything an app needs, wired together: per window, the keyboard tracker, layout watchdog
/// and automatic lock detection (`WatchdogScene`); for the whole app, the interaction-lock
/// watchdog, the tagged logger, the on-disk outbox, the uploader, the remote-config client,
/// the session and the tester's consent. The UIKit glue (`WatchdogUIKitDriver`, one per window
/// scene) feeds it notifications and ticks; on other platforms, or in tests, call the same
/// methods yourself.
///
/// ```swift
/// let agent = WatchdogAgent(settings: WatchdogSettings(
///     endpoint: URL(string: "https://watchdog.example.com")!, ingestKey: "wdi_…",
///     app: "com.example.mail", release: Release(version: "14.2.0", build: "31245", channel: "beta"),
///     device: Device(model: "iPhone15,2", os: "iOS", osVersion: "18.1", idiom: "phone"), idiom: .phone,
///     storageDirectory: applicationSupport.appendingPathComponent("Watchdog")), window: windowFrame)
/// agent.startSession()
/// ```
///
/// One agent per app: several scenes share its outbox, install id and session. It lives on the
/// main actor, where UIKit drives it once a tick (and where SwiftUI and the app's own code reach
/// it): as a main-actor class it is `Sendable`, so a `@Sendable` handler can capture it and hop
/// back (`Task { @MainActor in agent.setIngestKey(key) }`). Uploads, config fetches, App Attest
/// and the outbox's writes run off the main thread.
///
/// Creating it never throws: before the first unlock after a reboot (a background launch for a
/// push) the install id, the consent and the cached config cannot be read yet; the agent then
/// waits — no checks, no writes — and reads them in `protectedDataDidBecomeAvailable()`.
@MainActor
public final class WatchdogAgent {
    /// Where and who the agent reports as.
    public let settings: WatchdogSettings
    /// The `keyboard` log whose last lines go with every report.
    public let logger: TaggedLogger
    /// The first window's scene: the one `layout`, `automaticLocks`, `keyboardEvent(_:)` and
    /// `observeLocks(_:)` are about.
    public let mainScene: WatchdogScene
    /// The app's windows the agent watches, `mainScene` first.
    public private(set) var scenes: [WatchdogScene]
    /// Locks the host reports itself (`begin`/`end`), for custom cases: app-wide.
    public let locks: InteractionLockWatchdog
    /// Reports and session starts on disk until the server has them.
    public let outbox: Outbox
    /// Sends the outbox (`sync`, `syncNow`).
    public let uploader: Uploader
    /// The remote config: `config.current` is the one in force.
    public let config: RemoteConfigClient
    /// This install's id; `nil` while it cannot be read yet (before the first unlock).
    public internal(set) var installID: String?
    let writer: OutboxWriter
    let attester: AppAttester?
    let clock: @Sendable () -> Double
    let wallClock: @Sendable () -> Date
    var consent: ConsentStore
    var sessionPolicy = SessionPolicy()
    /// A session was started in this process (`startSessionIfNeeded`).
    var sessionStarted = false
    /// A session asked for before the install id or the consent could be read, and when.
    var pendingSessionStart: Date?
    var lastAppState: AppState = .active
    private let syncing = Locked(false)
    private let crashHandler: (TestCrash) -> Void
    private let testCrashLedger: TestCrashLedger
    private var beforeTestCrashHook: ((TestCrash) -> Void)?

    /// The main scene's layout watchdog: its keyboard tracker and watched views.
    public var layout: LayoutWatchdog { mainScene.layout }
    /// Locks the driver finds in the main scene without any host call (`observeLocks`).
    public var automaticLocks: AutomaticLockDetector { mainScene.automaticLocks }

    /// - Parameters:
    ///   - settings: where and who the agent reports as; the storage directory is created.
    ///   - window: the main window's frame in screen coordinates (the driver keeps it current).
    ///   - clock: monotonic seconds (animations, lock durations, backoff).
    ///   - wallClock: the time of day, for the time spent in the background (the monotonic clock
    ///     stops while the device sleeps; a new session is due after 30 s of real time).
    ///   - transport: how uploads and config fetches are sent (`URLSessionTransport` in an app).
    ///   - crashHandler: what `test_crash` does; by default a deliberate crash whose message
    ///     names the report (id and kind), so the crash reporter's crash can be matched with it.
    ///     Set `beforeTestCrash` to tag the crash reporter first.
    public init(settings: WatchdogSettings, window: Frame = Frame(x: 0, y: 0, width: 0, height: 0),
                clock: @escaping @Sendable () -> Double = WatchdogAgent.monotonicSeconds,
                wallClock: @escaping @Sendable () -> Date = Date.init,
                transport: any HTTPTransport = URLSessionTransport(),
                crashHandler: @escaping (TestCrash) -> Void = { fatalError($0.message) }) {
        self.settings = settings
        self.clock = clock
        self.wallClock = wallClock
        self.crashHandler = crashHandler
        let directory = settings.storageDirectory
        if (try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)) != nil {
            FileProtection.protectDirectory(directory)
        }
        let installID = settings.installID ?? InstallIdentity.resolve(in: directory)
        self.installID = installID
        logger = TaggedLogger(tag: "keyboard", capacity: settings.logLines, echo: settings.debugLogging ? DebugLog.write : nil)
        outbox = Outbox(lenientDirectory: directory.appendingPathComponent("outbox"), capacity: settings.outboxCapacity, fallbackRelease: settings.release)
        let logger = self.logger
        // DeviceCheck's App Attest is not available to app extensions: they never try.
        let attester = settings.host.isAppExtension ? nil : settings.appAttest.map { service in
            AppAttester(service: service, transport: transport, endpoint: settings.endpoint, ingestKey: settings.ingestKey, installID: installID ?? "",
                        stateFile: directory.appendingPathComponent("app-attest.json"), environment: settings.host.appAttestEnvironment, clock: clock, logger: logger)
        }
        self.attester = attester
        uploader = Uploader(outbox: outbox, endpoint: settings.endpoint, ingestKey: settings.ingestKey, transport: transport, clock: clock,
                            logger: logger, maximumBackoff: settings.maximumBackoff, attester: attester)
        config = RemoteConfigClient(endpoint: settings.endpoint, app: settings.app, version: settings.release.version, build: settings.release.build,
                                    channel: settings.release.channel, idiom: settings.device.idiom, installID: installID ?? "", ingestKey: settings.ingestKey,
                                    cacheFile: directory.appendingPathComponent("config.json"), transport: transport,
                                    clock: clock, minimumInterval: settings.configRefreshInterval, logger: logger)
        writer = OutboxWriter(outbox: outbox, logger: logger)
        consent = ConsentStore(directory: directory, defaultValue: settings.collectsByDefault)
        testCrashLedger = TestCrashLedger(file: directory.appendingPathComponent("test-crashes.json"))
        let context = ReportContext(app: settings.app, release: settings.release, device: settings.device, installID: installID ?? "")
        locks = InteractionLockWatchdog(context: context, sink: writer, logger: logger.child("navigation"), clock: clock)
        mainScene = Self.makeScene(context: context, window: window, settings: settings, sink: writer, logger: logger, clock: clock,
                                   ledger: testCrashLedger, crashHandler: crashHandler)
        scenes = [mainScene]
        if installID == nil { logger.log("install id not readable yet (before the first unlock?): waiting for protected data") }
        applyConfig()
    }

    private static func makeScene(context: ReportContext, window: Frame, settings: WatchdogSettings, sink: OutboxWriter, logger: TaggedLogger,
                                  clock: @escaping @Sendable () -> Double, ledger: TestCrashLedger, crashHandler: @escaping (TestCrash) -> Void) -> WatchdogScene {
        let layout = LayoutWatchdog(context: context, window: window, idiom: settings.idiom, sink: sink, logger: logger, clock: clock, crashHandler: crashHandler)
        layout.testCrashLedger = ledger
        layout.allowsTestCrash = settings.testCrashPermitted
        let automatic = AutomaticLockDetector(watchdog: InteractionLockWatchdog(context: context, sink: sink, logger: logger.child("transition"), clock: clock))
        return WatchdogScene(layout: layout, automaticLocks: automatic)
    }

    /// A scene for another window of the app (same context, sink, config and crash hook).
    func newScene(window: Frame) -> WatchdogScene {
        let scene = Self.makeScene(context: layout.context, window: window, settings: settings, sink: writer, logger: logger, clock: clock,
                                   ledger: testCrashLedger, crashHandler: crashHandler)
        scene.setConfig(config.current)
        scene.layout.beforeTestCrash = beforeTestCrashHook
        return scene
    }

    func appendScene(_ scene: WatchdogScene) { scenes.append(scene) }

    func removeScene(_ scene: WatchdogScene) { scenes.removeAll { $0 === scene } }

    /// Called just before a `test_crash` (its report already on disk): set the crash
    /// reporter's keys to `crash.reportID` and `crash.kind` here.
    public var beforeTestCrash: ((TestCrash) -> Void)? {
        get { beforeTestCrashHook }
        set {
            beforeTestCrashHook = newValue
            for scene in scenes { scene.layout.beforeTestCrash = newValue }
        }
    }

    /// Whether checks, writes and uploads run now: the install id is known, the tester has not
    /// said no, and the remote config has not switched the watchdog off.
    public var isCollecting: Bool { installID != nil && consent.isEnabled && config.current.enabled }

    /// One watchdog check in every scene; call it every `tickInterval` seconds. Also starts a
    /// config refresh and an upload in the background when they are due.
    public func tick() {
        check()
        sync()
    }

    /// The watchdog checks of `tick`, without starting a sync.
    public func check() {
        prepareCheck()
        guard isCollecting else { return }
        for scene in scenes {
            scene.layout.tick()
            scene.automaticLocks.tick()
        }
        locks.tick()
    }

    /// One tick of one window scene (its driver's timer): `observe` — the driver's walk over the
    /// window's view controllers — runs only when the scene is judged at all (collecting and
    /// active), so a watchdog switched off, or a scene in the background, costs the main thread
    /// nothing but this call.
    public func tick(_ scene: WatchdogScene, observe: () -> LockObservation) {
        prepareCheck()
        if isCollecting, scene.appState == .active {
            scene.automaticLocks.observe(observe())
            scene.layout.tick()
            scene.automaticLocks.tick()
            locks.tick()
        }
        sync()
    }

    private func prepareCheck() {
        if installID == nil { protectedDataDidBecomeAvailable() }
        writer.retryPending()
        applyConfig()
    }

    /// Seconds between two ticks: the remote `watchdog_interval_s`, but never under
    /// `minimumTickInterval` whatever the server says (the main thread's budget).
    public var tickInterval: Double { max(Self.minimumTickInterval, config.current.watchdogIntervalS) }

    /// The shortest tick interval the agent takes from the remote config, seconds.
    public nonisolated static let minimumTickInterval = 0.5

    /// A new ingest key, e.g. after the old one was revoked (uploads answered 401/403, see
    /// `setDeliveryStatusHandler`): uploads and config fetches use it from now on, at once.
    public func setIngestKey(_ key: String) {
        uploader.setIngestKey(key)
        config.setIngestKey(key)
    }

    /// Tells the host app about refusals ("ingest key refused", a proxy's 404/413, …) and
    /// recovery. Called on a background task whenever the status changes.
    public func setDeliveryStatusHandler(_ handler: @escaping @Sendable (DeliveryStatus) -> Void) {
        uploader.setStatusHandler(handler)
    }

    /// Reports saved to the outbox by this agent so far.
    public var reportsSaved: Int { writer.count }

    /// Reports and session starts that could not be written yet (device locked before its first
    /// unlock, disk full), kept in memory and retried at each tick.
    public var writesWaiting: Int {
        writer.flush()
        return writer.heldCount
    }

    /// Retries the writes that failed, at once (`protectedDataDidBecomeAvailable` does too).
    public func retryPendingWrites() {
        writer.retryPending()
    }

    /// Returns once every report and session start handed to the outbox so far is written (or
    /// held for a later try).
    public func flushWrites() {
        writer.flush()
    }

    /// Starts a config refresh and an upload in the background unless one is running (or the
    /// tester said no); the new config takes effect at the next tick.
    public func sync() {
        guard installID != nil, consent.isEnabled else { return }
        let start = syncing.withLock { busy -> Bool in
            if busy { return false }
            busy = true
            return true
        }
        guard start else { return }
        let config = config, uploader = uploader, syncing = syncing, writer = writer
        Task.detached {
            writer.flush()
            await syncPass(config: config, uploader: uploader)
            syncing.withLock { $0 = false }
        }
    }

    /// Refreshes the config and uploads, waiting for both (tests; background tasks).
    public func syncNow() async {
        // Let a background pass finish first, so this one really runs.
        while syncing.withLock({ $0 }) { try? await Task.sleep(nanoseconds: 5_000_000) }
        let writer = writer
        await Task.detached { writer.flush() }.value
        guard installID != nil, consent.isEnabled else { return }
        await syncPass(config: config, uploader: uploader)
        applyConfig()
    }

    /// Uploads what the outbox holds before the app is suspended (the driver calls it in a
    /// background task when the app's last scene goes to the background). Nothing goes over a
    /// network in Low Data Mode (`allowsConstrainedNetworkAccess` false): it waits for the next
    /// foreground. Returns when done, or when there is nothing it may do.
    public func flushForBackground() async {
        let writer = writer, uploader = uploader
        await Task.detached { writer.flush() }.value
        guard installID != nil, consent.isEnabled, config.current.enabled else { return }
        await uploader.drain(allowsConstrainedNetwork: false)
    }

    func applyConfig() {
        let current = config.current
        for scene in scenes { scene.setConfig(current) }
        locks.config = current
        uploader.setEnabled(current.enabled && consent.isEnabled && installID != nil)
        uploader.setAttesting(CohortBucket.includes(key: "attest_percent", installID: installID ?? "", percent: current.attestPercent))
    }

    /// Seconds from a monotonic clock.
    public nonisolated static let monotonicSeconds: @Sendable () -> Double = {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }
}

/// Uploads first, then fetches the config — at once if a test-crash report just went up,
/// since the server counts it against this install's daily budget.
private func syncPass(config: RemoteConfigClient, uploader: Uploader) async {
    await uploader.drain()
    await config.refreshIfDue(force: uploader.takeUploadedTestCrash())
}
