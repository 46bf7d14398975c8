import Dispatch
import Foundation
import Locking
import Logging

/// systemd's watchdog (`WatchdogSec=`, sd_watchdog_enabled(3)): when `$WATCHDOG_USEC` asks for
/// pings — and `$WATCHDOG_PID`, if set, is this process — sends `WATCHDOG=1` every half timeout,
/// but only after every check passed in that round: the ingest writer finished a round of work
/// and the HTTP loop answered its own socket. A wedged writer or HTTP loop stops the pings, and
/// systemd kills and restarts the service once the timeout passes.
final class ServiceWatchdog: Sendable {
    /// One proof of progress; gets a time budget in seconds.
    struct Check: Sendable {
        var name: String
        var passes: @Sendable (Double) -> Bool
    }

    /// Seconds between pings: half of `$WATCHDOG_USEC`, or `nil` when systemd asks for none.
    static func pingInterval(environment: [String: String] = ProcessInfo.processInfo.environment,
                             processID: Int32 = getpid()) -> Double? {
        guard let text = environment["WATCHDOG_USEC"], let microseconds = UInt64(text), microseconds > 0 else { return nil }
        if let pid = environment["WATCHDOG_PID"], Int32(pid) != processID { return nil }
        return Double(microseconds) / 2_000_000
    }

    private let interval: Double
    private let notifier: SystemdNotifier
    private let checks: [Check]
    private let logger: Logger
    private let stopped = Locked(false)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(interval: Double, notifier: SystemdNotifier, checks: [Check], logger: Logger) {
        self.interval = interval
        self.notifier = notifier
        self.checks = checks
        self.logger = logger
        ServiceThread.start("wd-sd-watchdog") { [self] in run() }
    }

    /// Stops pinging (a drain has started: systemd's stop timeout applies from here).
    func stop() {
        stopped.withLock { $0 = true }
        wake.signal()
        finished.wait()
    }

    private func run() {
        // Each check may use its share of the round; the pings still come every `interval`.
        let budget = interval / Double(max(checks.count, 1)) / 2
        var failing: String?
        while !stopped.withLock({ $0 }) {
            let start = DispatchTime.now()
            let failed = checks.first { !$0.passes(budget) }?.name
            if stopped.withLock({ $0 }) { break }
            if failed != failing {
                if let failed {
                    logger.warning("not pinging systemd's watchdog: \(failed)")
                } else if let failing {
                    logger.notice("pinging systemd's watchdog again (\(failing) recovered)")
                }
                failing = failed
            }
            if failed == nil {
                do { try notifier.notify(["WATCHDOG=1"]) } catch { logger.warning("systemd watchdog ping: \(error)") }
            }
            _ = wake.wait(timeout: start + interval)
        }
        finished.signal()
    }
}
