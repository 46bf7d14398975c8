#if os(iOS)
import Foundation

/// The crash reporter's custom keys, set just before a Watchdog test crash so that the crash
/// and its report can be matched: Crashlytics' `setCustomValue(_:forKey:)`, or Sentry's
/// `scope.setTag(value:key:)`, behind this in a real app.
protocol CrashReporter {
    func setCustomValue(_ value: String, forKey key: String)
}

/// Stands in for the app's crash reporter here: the keys go to the console.
struct LoggingCrashReporter: CrashReporter {
    func setCustomValue(_ value: String, forKey key: String) {
        print("crash reporter key \(key) = \(value)")
    }
}
#endif
