#if os(iOS)
import UIKit
import WatchdogKit

/// Watchdog for the app: one agent, made by the first window scene and shared by all (one
/// outbox, one install id, one session), what it does when its ingest key is refused, the crash
/// reporter's keys before a test crash, and a UIKit driver per window scene that feeds it.
@MainActor
enum WatchdogSetup {
    /// The app's agent, once the first scene made it.
    private(set) static var made: WatchdogAgent?

    static func agent(crashReporter: any CrashReporter) -> WatchdogAgent {
        if let made { return made }
        let info = Bundle.main.infoDictionary ?? [:]
        let idiom: DeviceIdiom = UIDevice.current.userInterfaceIdiom == .pad ? .pad : .phone
        // `UIDevice.model` is the family (`iPhone`); the hardware identifier (`iPhone15,2`), which the
        // server's breakdowns are finer with, is `utsname.machine` from `uname`.
        var settings = WatchdogSettings(
            endpoint: URL(string: "https://watchdog.example.com")!, ingestKey: "wdi_…",
            app: Bundle.main.bundleIdentifier ?? "com.example.mail",
            release: Release(version: info["CFBundleShortVersionString"] as? String ?? "0", build: info["CFBundleVersion"] as? String ?? "0", channel: "beta"),
            device: Device(model: UIDevice.current.model, os: "iOS", osVersion: UIDevice.current.systemVersion, idiom: idiom.rawValue),
            idiom: idiom, storageDirectory: FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
                .appendingPathComponent("Watchdog"))
        // Only the beta configuration's Info.plist sets this key; an App Store build never crashes on purpose anyway.
        settings.allowsTestCrash = info["WatchdogAllowsTestCrash"] as? Bool ?? false
        #if DEBUG
        settings.debugLogging = true                                     // the SDK's own lines in Xcode's console
        #endif
        if #available(iOS 14.0, *) {
            settings.appAttest = DeviceCheckAppAttestService()           // the App Attest capability and entitlement: README
        }
        let agent = WatchdogAgent(settings: settings)
        agent.setDeliveryStatusHandler { status in                        // called off the main actor
            guard case .ingestKeyRefused = status else { return }         // e.g. .ingestKeyRefused(status: 401, …)
            Task { @MainActor in
                if let key = try? await IngestKeys.fetchCurrent() { agent.setIngestKey(key) }
            }
        }
        agent.beforeTestCrash = { crash in                               // the report is already on disk
            crashReporter.setCustomValue(crash.reportID, forKey: "watchdog_report_id")
            crashReporter.setCustomValue(crash.kind, forKey: "watchdog_kind")
        }
        made = agent
        return agent
    }

    /// A driver for one window scene's window, feeding the app's agent.
    static func start(in window: UIWindow, crashReporter: any CrashReporter) -> WatchdogUIKitDriver {
        let driver = WatchdogUIKitDriver(agent: agent(crashReporter: crashReporter), window: window)  // one per window scene
        driver.start()                                                   // observers and timer; the app's session starts once
        return driver
    }
}
#endif
