import Foundation

/// How WatchdogKit's files are kept on iOS: protection class *complete until first user
/// authentication* (readable and writable in the background once the device has been
/// unlocked after boot, encrypted before), and excluded from iCloud and iTunes backups (a
/// telemetry queue has nothing to restore on another device). Elsewhere (Linux, tests) it
/// does nothing.
///
/// Before the first unlock a protected file cannot be created or opened: the outbox's write
/// fails, and `RetryingSink` keeps the item in memory until a later write succeeds.
enum FileProtection {
    /// Marks a directory (and, through the directory, what is created in it).
    static func protectDirectory(_ url: URL) {
        #if os(iOS)
        try? FileManager.default.setAttributes([.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication], ofItemAtPath: url.path)
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        var url = url
        try? url.setResourceValues(values)
        #endif
    }

    /// Marks a file just created (before it is renamed into place).
    static func protectFile(atPath path: String) {
        #if os(iOS)
        try? FileManager.default.setAttributes([.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication], ofItemAtPath: path)
        #endif
    }
}
