import Locking
import Foundation
import WatchdogWire

/// Everything an app needs, wired together: the keyboard tracker and layout watchdog, the
/// interaction-lock watchdog, the tagged logger, the on-disk outbox, the uploader and the
/// remote-config client. The UIKit glue (`WatchdogUIKitDriver`) feeds it notifications and
/// ticks; on other platforms, or in tests, call the same methods yourself.
///
/// ```swift
/// let agent = try WatchdogAgent(settings: WatchdogSettings(
///     endpoint: URL(string: "https://watchdog.example.com")!, ingestKey: "wdi_…",
///     app: "com.example.mail", release: Release(version: "14.2.0", build: "31245", channel: "beta"),
///     device: Device(model: "iPhone15,2", os: "iOS", osVersion: "18.1", idiom: "phone"), idiom: .phone,
///     storageDirectory: applicationSupport.appendingPathComponent("Watchdog")), window: windowFrame)
/// agent.startSession()
/// ```
///
/// It lives on the main actor, where UIKit drives it once a tick (and where SwiftUI and the
/// app's own code reach it): as a main-actor class it is `Sendable`, so a `@Sendable` handler
/// can capture it and hop back (`Task { @MainActor in agent.setIngestKey(key) }`). Uploads,
/// config fetches and App Attest run off the main actor; the outbox write of a report happens
/// in the tick that finds it.
@MainActor
public final class WatchdogAgent {
    /// Where and who the agent reports as.
    public let settings: WatchdogSettings
    /// The `keyboard` log whose last lines go with every report.
    public let logger: TaggedLogger
    /// The keyboard tracker and the watched views: `layout.watch(…)` for views the UIKit driver does not register.
    public let layout: LayoutWatchdog
    /// Locks the host reports itself (`begin`/`end`), for custom cases.
    public let locks: InteractionLockWatchdog
    /// Locks found without any host call, from what the UIKit driver observes at each tick
    /// (`observeLocks`): transitions that do not finish, views left ignoring touches.
    public let automaticLocks: AutomaticLockDetector
    /// Reports and session starts on disk until the server has them.
    public let outbox: Outbox
    /// Sends the outbox (`sync`, `syncNow`).
    public let uploader: Uploader
    /// The remote config: `config.current` is the one in force.
    public let config: RemoteConfigClient
    private let syncing = Locked(false)
    private let sink: RetryingSink

    /// - Parameters:
    ///   - settings: where and who the agent reports as; the storage directory is created.
    ///   - window: the key window's frame in screen coordinates.
    ///   - clock: monotonic seconds.
    ///   - transport: how uploads and config fetches are sent (`URLSessionTransport` in an app).
    ///   - crashHandler: what `test_crash` does; by default a deliberate crash whose message
    ///     names the report (id and kind), so the crash reporter's crash can be matched with it.
    ///     Set `beforeTestCrash` to tag the crash reporter first.
    public init(settings: WatchdogSettings, window: Frame, clock: @escaping @Sendable () -> Double = WatchdogAgent.monotonicSeconds,
                transport: any HTTPTransport = URLSessionTransport(),
                crashHandler: @escaping (TestCrash) -> Void = { fatalError($0.message) }) throws {
        self.settings = settings
        try FileManager.default.createDirectory(at: settings.storageDirectory, withIntermediateDirectories: true)
        FileProtection.protectDirectory(settings.storageDirectory)
        let installID = try settings.installID ?? Self.installID(in: settings.storageDirectory)
        let context = ReportContext(app: settings.app, release: settings.release, device: settings.device, installID: installID)
        logger = TaggedLogger(tag: "keyboard", capacity: settings.logLines)
        outbox = try Outbox(directory: settings.storageDirectory.appendingPathComponent("outbox"), capacity: settings.outboxCapacity,
                            fallbackRelease: settings.release)
        let logger = self.logger
        let attester = settings.appAttest.map { service in
            AppAttester(service: service, transport: transport, endpoint: settings.endpoint, ingestKey: settings.ingestKey, installID: installID,
                        stateFile: settings.storageDirectory.appendingPathComponent("app-attest.json"), clock: clock, logger: logger)
        }
        uploader = Uploader(outbox: outbox, endpoint: settings.endpoint, ingestKey: settings.ingestKey, transport: transport, clock: clock,
                            logger: logger, maximumBackoff: settings.maximumBackoff, attester: attester)
        config = RemoteConfigClient(endpoint: settings.endpoint, app: settings.app, version: settings.release.version, build: settings.release.build,
                                    channel: settings.release.channel, idiom: settings.device.idiom, installID: installID, ingestKey: settings.ingestKey,
                                    cacheFile: settings.storageDirectory.appendingPathComponent("config.json"), transport: transport,
                                    clock: clock, minimumInterval: settings.configRefreshInterval, logger: logger)
        sink = RetryingSink(outbox: outbox, logger: logger)
        layout = LayoutWatchdog(context: context, window: window, idiom: settings.idiom, sink: sink, logger: logger, clock: clock, crashHandler: crashHandler)
        layout.testCrashLedger = TestCrashLedger(file: settings.storageDirectory.appendingPathComponent("test-crashes.json"))
        locks = InteractionLockWatchdog(context: context, sink: sink, logger: logger.child("navigation"), clock: clock)
        automaticLocks = AutomaticLockDetector(watchdog: InteractionLockWatchdog(context: context, sink: sink, logger: logger.child("transition"), clock: clock))
        applyConfig()
    }

    /// Starts a session (the denominator of the server's rates): a new session id on every
    /// report from now on, and a session start saved for upload.
    public func startSession() {
        applyConfig()
        guard config.current.enabled else { return }
        var context = layout.context
        context.sessionID = TimeOrderedID.make()
        layout.context = context
        locks.context = context
        automaticLocks.watchdog.context = context
        let session = SessionStart(id: context.sessionID, installId: context.installID,
                                   startedAt: Timestamp.format(milliseconds: Int64(Date().timeIntervalSince1970 * 1000)),
                                   app: context.app, release: context.release, device: context.device)
        sink.persistOrHold(session)
        sync()
    }

    /// Called just before a `test_crash` (its report already on disk): set the crash
    /// reporter's keys to `crash.reportID` and `crash.kind` here.
    public var beforeTestCrash: ((TestCrash) -> Void)? {
        get { layout.beforeTestCrash }
        set { layout.beforeTestCrash = newValue }
    }

    /// The app's lifecycle state: the watchdogs judge only while `active`.
    public func setAppState(_ state: AppState) {
        layout.appState = state
        locks.appState = state
        automaticLocks.watchdog.appState = state
    }

    /// What can block interaction now, as the UIKit driver sees it before each tick (or a
    /// test, or another platform's glue): see `AutomaticLockDetector`.
    public func observeLocks(_ observation: LockObservation) {
        automaticLocks.observe(observation)
    }

    /// A keyboard notification (this app's or, with `isLocal == false`, another app's: ignored).
    public func keyboardEvent(_ event: KeyboardEvent) {
        layout.keyboardEvent(event)
    }

    /// The key window moved or resized (screen coordinates): the keyboard geometry is
    /// re-evaluated without waiting for a keyboard notification.
    public func windowChanged(_ frame: Frame, animationDuration: Double = 0) {
        layout.windowChanged(frame, animationDuration: animationDuration)
    }

    /// One watchdog check; call it every `config.current.watchdogIntervalS` seconds. Also
    /// starts a config refresh and an upload in the background when they are due.
    public func tick() {
        check()
        sync()
    }

    /// The watchdog checks of `tick`, without starting a sync.
    public func check() {
        sink.retryPending()
        applyConfig()
        layout.tick()
        locks.tick()
        automaticLocks.tick()
    }

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
    public var reportsSaved: Int { sink.count }

    /// Reports and session starts that could not be written yet (device locked before its first
    /// unlock, disk full), kept in memory and retried at each tick.
    public var writesWaiting: Int { sink.held.count }

    /// Retries the writes that failed, at once (the UIKit driver calls it when protected data
    /// becomes available); `tick` does too.
    public func retryPendingWrites() {
        sink.retryPending()
    }

    /// Starts a config refresh and an upload in the background unless one is running; the
    /// new config takes effect at the next tick.
    public func sync() {
        let start = syncing.withLock { busy -> Bool in
            if busy { return false }
            busy = true
            return true
        }
        guard start else { return }
        let config = config, uploader = uploader, syncing = syncing
        Task.detached {
            await syncPass(config: config, uploader: uploader)
            syncing.withLock { $0 = false }
        }
    }

    /// Refreshes the config and uploads, waiting for both (tests; background tasks).
    public func syncNow() async {
        // Let a background pass finish first, so this one really runs.
        while syncing.withLock({ $0 }) { try? await Task.sleep(nanoseconds: 5_000_000) }
        await syncPass(config: config, uploader: uploader)
        applyConfig()
    }



    private func applyConfig() {
        let current = config.current
        layout.config = current
        locks.config = current
        automaticLocks.watchdog.config = current
        uploader.setEnabled(current.enabled)
    }

    /// The install id kept in the storage directory, created on first use.
    nonisolated static func installID(in directory: URL) throws -> String {
        let file = directory.appendingPathComponent("install-id")
        if let existing = try? String(contentsOf: file, encoding: .utf8), !existing.isEmpty { return existing }
        let id = TimeOrderedID.make()
        try id.write(to: file, atomically: true, encoding: .utf8)
        return id
    }

    /// Seconds from a monotonic clock.
    public nonisolated static let monotonicSeconds: @Sendable () -> Double = {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }
}

/// Where and who the agent reports as.
public struct WatchdogSettings: Sendable {
    /// The server's base URL (`https://watchdog.example.com`).
    public var endpoint: URL
    /// The app's ingest key (`wdi_…`), as `watchdogd` issued it.
    public var ingestKey: String
    /// The app's bundle id, as registered on the server.
    public var app: String
    /// This build: version, build number, channel.
    public var release: Release
    /// This device as reports name it: model, OS and version, idiom.
    public var device: Device
    /// The device family, for the keyboard geometry.
    public var idiom: DeviceIdiom
    /// Outbox, cached config and install id live here (Application Support in an app).
    public var storageDirectory: URL
    /// `nil`: a random id kept in `storageDirectory`.
    public var installID: String?
    /// Seconds between two config fetches at least.
    public var configRefreshInterval: Double = 300
    /// Longest wait between upload attempts after failures (and longest `Retry-After`), seconds.
    public var maximumBackoff: Double = 300
    /// How much the outbox holds per kind before the oldest items are evicted (and counted).
    public var outboxCapacity = Outbox.Capacity()
    /// Log lines kept, and attached to each report.
    public var logLines: Int = 50
    /// Opt in to App Attest (README, "Attested installs"): the install attests a key once and
    /// signs every upload. `nil` (the default): uploads are not signed. In an app:
    /// `DeviceCheckAppAttestService()`; where `isSupported` is false, uploads go unattested.
    public var appAttest: (any AppAttestService)?

    /// Settings with the defaults for the rest (`configRefreshInterval`, `maximumBackoff`, …).
    public init(endpoint: URL, ingestKey: String, app: String, release: Release, device: Device, idiom: DeviceIdiom, storageDirectory: URL, installID: String? = nil) {
        self.endpoint = endpoint
        self.ingestKey = ingestKey
        self.app = app
        self.release = release
        self.device = device
        self.idiom = idiom
        self.storageDirectory = storageDirectory
        self.installID = installID
    }
}

/// Uploads first, then fetches the config — at once if a test-crash report just went up,
/// since the server counts it against this install's daily budget.
private func syncPass(config: RemoteConfigClient, uploader: Uploader) async {
    await uploader.drain()
    await config.refreshIfDue(force: uploader.takeUploadedTestCrash())
}
