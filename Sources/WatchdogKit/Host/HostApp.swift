import Foundation

/// How the running build reached the device, as far as its bundle tells.
public enum AppDistribution: String, Sendable, Equatable {
    /// From the App Store: a production receipt (`receipt`) or none, and no embedded
    /// provisioning profile. Never crashes on purpose.
    case appStore
    /// TestFlight (or App Review, which the bundle cannot tell from it): a sandbox receipt
    /// (`sandboxReceipt`) and no embedded provisioning profile.
    case testFlight
    /// Installed from Xcode, ad hoc or enterprise (an `embedded.mobileprovision` in the bundle),
    /// or running in the Simulator.
    case development
    /// Not an iOS app bundle (macOS, Linux, tests): decided by the host.
    case unknown

    /// Whether a deliberate `test_crash` may happen in such a build (with `allowsTestCrash`).
    public var allowsTestCrash: Bool { self == .testFlight || self == .development }

    /// The rule, from what the bundle holds: the Simulator and a provisioning profile are
    /// development builds; a sandbox receipt is TestFlight's; anything else — a production
    /// receipt, or none at all — counts as the App Store's, so that a build the rule cannot
    /// place never crashes on purpose.
    public static func decide(receiptName: String?, hasProvisioningProfile: Bool, isSimulator: Bool) -> AppDistribution {
        if isSimulator || hasProvisioningProfile { return .development }
        return receiptName == "sandboxReceipt" ? .testFlight : .appStore
    }
}

/// The app WatchdogKit runs in: its distribution (for the `test_crash` guard) and whether it is
/// an app extension (no App Attest there: DeviceCheck does not support extensions).
public struct HostApp: Sendable, Equatable {
    /// How the build was distributed.
    public var distribution: AppDistribution
    /// Whether the code runs in an app extension (`.appex`), not the app itself.
    public var isAppExtension: Bool

    /// A host as a test (or another platform's glue) states it.
    public init(distribution: AppDistribution, isAppExtension: Bool = false) {
        self.distribution = distribution
        self.isAppExtension = isAppExtension
    }

    /// The App Attest environment this build's keys belong to, as far as the distribution tells:
    /// `development` for Xcode-installed (and ad hoc) builds and the Simulator, `production` for
    /// TestFlight and the App Store; `nil` when unknown. Saved with the key: a build of the other
    /// environment makes a new one.
    public var appAttestEnvironment: String? {
        switch distribution {
        case .development: "development"
        case .testFlight, .appStore: "production"
        case .unknown: nil
        }
    }

    /// Whether a bundle at `bundlePath` is an app extension's (its folder ends in `.appex`).
    public static func isAppExtension(bundlePath: String) -> Bool {
        bundlePath.hasSuffix(".appex") || bundlePath.hasSuffix(".appex/")
    }

    /// The running app, read from `Bundle.main`: on iOS its receipt's name, provisioning profile
    /// and the Simulator; elsewhere the distribution is `unknown`.
    public static var current: HostApp {
        HostApp(distribution: AppDistribution.detected, isAppExtension: isAppExtension(bundlePath: Bundle.main.bundlePath))
    }
}

extension AppDistribution {
    /// This build's distribution, from `Bundle.main`.
    static var detected: AppDistribution {
        #if os(iOS)
        #if targetEnvironment(simulator)
        let simulator = true
        #else
        let simulator = false
        #endif
        // The receipt's file name says which environment it is from; the URL is given even
        // where no receipt was downloaded yet.
        let receipt = Bundle.main.appStoreReceiptURL?.lastPathComponent
        return decide(receiptName: receipt, hasProvisioningProfile: hasProvisioningProfile, isSimulator: simulator)
        #else
        return .unknown
        #endif
    }

    /// Whether the main bundle carries a provisioning profile (Xcode, ad hoc, enterprise builds).
    static var hasProvisioningProfile: Bool {
        Bundle.main.path(forResource: "embedded", ofType: "mobileprovision") != nil
    }
}
