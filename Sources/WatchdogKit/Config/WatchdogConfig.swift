import Foundation

/// The remote switches and tunables the watchdog reads (docs/remote-config.md), with their defaults.
public struct WatchdogConfig: Codable, Sendable, Equatable {
    /// The config's version on the server (0: the built-in defaults).
    public var version: Int = 0
    /// Kill switch: `false` stops checks, reports and uploads.
    public var enabled: Bool = true
    /// Crash on purpose after a glitch is reported and flushed.
    public var testCrash: Bool = false
    /// Put the view back where it belongs.
    public var autoFix: Bool = false
    /// Seconds between two watchdog ticks (`watchdog_interval_s`).
    public var watchdogIntervalS: Double = 1.0
    /// Points a view may be off its expected frame before it counts as a glitch (`frame_tolerance_pt`).
    public var frameTolerancePt: Double = 1.0
    /// Seconds an interaction lock may hold before it is reported (`lock_threshold_s`).
    public var lockThresholdS: Double = 10
    /// The share of glitches reported, 0 to 1 (`report_sample_rate`).
    public var reportSampleRate: Double = 1.0
    /// Test crashes one install may do per UTC day.
    public var testCrashBudget: Int = 1
    /// RFC 3339 time after which `test_crash` is off.
    public var testCrashExpiresAt: String?
    /// The share of installs, 0 to 100, that attest with App Attest (`attest_percent`): Apple
    /// asks apps to onboard installs gradually. The same installs stay in as it grows.
    public var attestPercent: Double = 100

    /// The built-in defaults, used until the server has been reached once.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case version, enabled
        case testCrash = "test_crash"
        case autoFix = "auto_fix"
        case watchdogIntervalS = "watchdog_interval_s"
        case frameTolerancePt = "frame_tolerance_pt"
        case lockThresholdS = "lock_threshold_s"
        case reportSampleRate = "report_sample_rate"
        case testCrashBudget = "test_crash_budget"
        case testCrashExpiresAt = "test_crash_expires_at"
        case attestPercent = "attest_percent"
    }

    /// Missing keys keep their defaults, so a newer or older server never breaks the client.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = WatchdogConfig()
        version = try container.decodeIfPresent(Int.self, forKey: .version) ?? defaults.version
        enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled) ?? defaults.enabled
        testCrash = try container.decodeIfPresent(Bool.self, forKey: .testCrash) ?? defaults.testCrash
        autoFix = try container.decodeIfPresent(Bool.self, forKey: .autoFix) ?? defaults.autoFix
        watchdogIntervalS = try container.decodeIfPresent(Double.self, forKey: .watchdogIntervalS) ?? defaults.watchdogIntervalS
        frameTolerancePt = try container.decodeIfPresent(Double.self, forKey: .frameTolerancePt) ?? defaults.frameTolerancePt
        lockThresholdS = try container.decodeIfPresent(Double.self, forKey: .lockThresholdS) ?? defaults.lockThresholdS
        reportSampleRate = try container.decodeIfPresent(Double.self, forKey: .reportSampleRate) ?? defaults.reportSampleRate
        testCrashBudget = try container.decodeIfPresent(Int.self, forKey: .testCrashBudget) ?? defaults.testCrashBudget
        testCrashExpiresAt = try container.decodeIfPresent(String.self, forKey: .testCrashExpiresAt)
        attestPercent = try container.decodeIfPresent(Double.self, forKey: .attestPercent) ?? defaults.attestPercent
    }
}
