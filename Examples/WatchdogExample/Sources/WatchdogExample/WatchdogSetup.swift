#if os(iOS)
import UIKit
import WatchdogKit

/// Watchdog for one window: the agent, what it does when its ingest key is refused, the crash
/// reporter's keys before a test crash, and the UIKit driver that feeds it.
@MainActor
enum WatchdogSetup {
    static func start(in window: UIWindow, crashReporter: any CrashReporter) throws -> WatchdogUIKitDriver {
        let info = Bundle.main.infoDictionary ?? [:]
        let idiom: DeviceIdiom = UIDevice.current.userInterfaceIdiom == .pad ? .pad : .phone
        // `UIDevice.model` is the family (`iPhone`); the hardware identifier (`iPhone15,2`), which the
        // server's breakdowns are finer with, is `utsname.machine` from `uname`.
        let agent = try WatchdogAgent(settings: WatchdogSettings(
            endpoint: URL(string: "https://watchdog.example.com")!, ingestKey: "wdi_…",
            app: Bundle.main.bundleIdentifier ?? "com.example.mail",
            release: Release(version: info["CFBundleShortVersionString"] as? String ?? "0", build: info["CFBundleVersion"] as? String ?? "0", channel: "beta"),
            device: Device(model: UIDevice.current.model, os: "iOS", osVersion: UIDevice.current.systemVersion, idiom: idiom.rawValue),
            idiom: idiom, storageDirectory: FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
                .appendingPathComponent("Watchdog")),
            window: Frame(window.frame))
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
        let driver = WatchdogUIKitDriver(agent: agent, window: window)   // keyboard + scene lifecycle observers, timer
        driver.start()                                                   // starts a session too
        return driver
    }
}
#endif
