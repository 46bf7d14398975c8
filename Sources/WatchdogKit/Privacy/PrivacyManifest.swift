import Foundation

/// WatchdogKit's privacy manifest (`PrivacyInfo.xcprivacy`), shipped as a resource of the
/// target: the required-reason APIs the SDK calls (file timestamps, C617.1; the system uptime
/// clock, 35F9.1) and the data it collects, none of it for tracking. Xcode merges it into the
/// app's privacy report; README's "Privacy" section lists what leaves the device.
public enum PrivacyManifest {
    /// The manifest in the package's resource bundle, or `nil` if it was not copied.
    public static var url: URL? {
        Bundle.module.url(forResource: "PrivacyInfo", withExtension: "xcprivacy")
    }
}
