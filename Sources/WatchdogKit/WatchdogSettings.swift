import Foundation
import WatchdogWire

/// Where and who the agent reports as, and what the app allows it to do.
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
    /// Outbox, cached config, consent and install id live here (Application Support in an app).
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
    /// Opt in to App Attest (docs/security.md, "Attested installs"): the install attests a key once and
    /// signs every upload. `nil` (the default): uploads are not signed. In an app:
    /// `DeviceCheckAppAttestService()`; where `isSupported` is false, and in app extensions
    /// (`host.isAppExtension`), uploads go unattested.
    public var appAttest: (any AppAttestService)?
    /// Whether collection is on until the tester says otherwise (`WatchdogAgent.isCollectionEnabled`,
    /// whose choice is kept and wins). `true` by default; `false` asks first.
    public var collectsByDefault = true
    /// Whether this build may crash on purpose when the remote config turns `test_crash` on.
    /// `false` by default: set it in builds for testers only. Even when `true`, an App Store
    /// build never crashes (`host.distribution`).
    public var allowsTestCrash = false
    /// Echo the SDK's own log lines (the `[keyboard]…` lines reports carry) to the unified log
    /// (subsystem `WatchdogKit`, visible in Xcode's console and Console.app) — to watch it
    /// while integrating. `false` by default.
    public var debugLogging = false
    /// The app this runs in: how it was distributed and whether it is an extension, as the
    /// bundle says (`HostApp.current`).
    public var host = HostApp.current

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

    /// Whether a deliberate `test_crash` may happen in this build at all.
    public var testCrashPermitted: Bool { allowsTestCrash && host.distribution.allowsTestCrash }
}
