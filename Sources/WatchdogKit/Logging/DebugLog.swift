#if os(iOS)
import os
#else
import Foundation
#endif
import Locking

/// Where `WatchdogSettings.debugLogging` sends the SDK's own log lines: the unified log on iOS
/// (subsystem `WatchdogKit`, category `sdk`, at the info level: shown in Xcode's console and in
/// Console.app with info messages on), standard error elsewhere. The lines are WatchdogKit's own
/// (no user content), so they are logged as public.
enum DebugLog {
    /// Replaces the destination (tests); `nil` restores it.
    static let destination = Locked<(@Sendable (String) -> Void)?>(nil)

    @Sendable static func write(_ line: String) {
        if let destination = destination.withLock({ $0 }) {
            destination(line)
            return
        }
        #if os(iOS)
        os_log("%{public}@", log: log, type: .info, line)
        #else
        FileHandle.standardError.write(Data("WatchdogKit: \(line)\n".utf8))
        #endif
    }

    #if os(iOS)
    /// `OSLog` is not `Sendable` in the SDK, but a log handle is made to be used from any thread.
    nonisolated(unsafe) private static let log = OSLog(subsystem: "WatchdogKit", category: "sdk")
    #endif
}
