import Foundation
import Locking
import PostgresClient

/// A thread with a connection of its own that `LISTEN`s on a channel; `saveConfig` notifies
/// it in the same transaction, so the notification arrives only once the change is committed.
final class PostgresChangeWatch: StoreWatch {
    static let configChannel = "watchdog_config"

    private let stopped = Locked(false)
    private let finished = DispatchSemaphore(value: 0)

    init(url: String, channel: String, fallbackSeconds: Double, onChange: @escaping @Sendable (String?) -> Void) {
        ServiceThread.start("wd-pg-listen") { [stopped, finished] in
            var connection: PostgresConnection?
            var lastFallback = Date()
            while !stopped.withLock({ $0 }) {
                do {
                    if connection == nil {
                        let fresh = try PostgresConnection(url: url)
                        try fresh.listen(channel)
                        connection = fresh
                        // Listening now: whatever changed before is read once.
                        onChange(nil)
                        lastFallback = Date()
                    }
                    let received = try connection!.notifications(timeout: 0.25)
                    for notification in received { onChange(notification.payload.isEmpty ? nil : notification.payload) }
                    if Date().timeIntervalSince(lastFallback) >= fallbackSeconds {
                        onChange(nil)
                        lastFallback = Date()
                    }
                } catch {
                    connection = nil
                    Thread.sleep(forTimeInterval: 0.5)
                }
            }
            finished.signal()
        }
    }

    func stop() {
        let first = stopped.withLock { stopped -> Bool in
            defer { stopped = true }
            return !stopped
        }
        if first { finished.wait() }
    }
}

extension PostgresStore: SharedTelemetryStore {
    public func watchConfigChanges(fallbackSeconds: Double, _ onChange: @escaping @Sendable (String?) -> Void) -> any StoreWatch {
        PostgresChangeWatch(url: pool.url, channel: PostgresChangeWatch.configChannel, fallbackSeconds: fallbackSeconds, onChange: onChange)
    }
}
