import Foundation
import Logging
import WatchdogHTTP
import WatchdogServer

/// What `watchdogd serve` tells systemd (`Type=notify`, deploy/watchdogd.service): `READY=1`
/// once the store is open, the caches warmed and the socket listening; `WATCHDOG=1` while the
/// writer and the HTTP loop make progress; `STOPPING=1` when the drain starts. Outside systemd
/// (no `$NOTIFY_SOCKET`) it does nothing.
final class ServiceLifecycle {
    private let notifier = SystemdNotifier()
    private let logger: Logger
    private var watchdog: ServiceWatchdog?

    init(logger: Logger) {
        self.logger = logger
    }

    /// Call once `server` exists (store open, warm-up done, listening).
    func ready(server: WatchdogServer, listen: ListenAddress, url: String) {
        send("READY=1", "STATUS=listening on \(url)")
        guard notifier.isEnabled, let interval = ServiceWatchdog.pingInterval() else { return }
        let http = HTTPSelfCheck(listen: listen, port: server.port)
        watchdog = ServiceWatchdog(interval: interval, notifier: notifier, checks: [
            .init(name: "the ingest writer finished no round of work in time") { server.writerMakesProgress(withinSeconds: $0) },
            .init(name: "the HTTP server did not answer GET /healthz on its own socket in time") { http.answers(withinSeconds: $0) },
        ], logger: logger)
        logger.info("pinging systemd's watchdog every \(interval) s while the writer and the HTTP loop make progress")
    }

    /// Call when the drain starts.
    func stopping() {
        send("STOPPING=1", "STATUS=draining requests in flight and committing queued reports")
        watchdog?.stop()
        watchdog = nil
    }

    private func send(_ fields: String...) {
        do {
            try notifier.notify(fields)
        } catch {
            logger.warning("systemd notification \(fields.first ?? ""): \(error)")
        }
    }
}
