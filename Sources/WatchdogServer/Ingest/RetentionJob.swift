import Dispatch
import Foundation
import Logging
import Locking
import WatchdogStore

/// Prunes audit rows older than their own period (`--audit-retention-days`, default 400), and
/// raw reports and session starts older than the retention period, in small batches in the
/// background (each a short transaction, so ingest keeps its turn at the writer), then what no
/// longer needs keeping (`TelemetryStore.pruneDerived`: unlisted releases with no raw row left,
/// install origins of installs gone quiet, old hourly counts), then hands the freed pages back
/// to the file system. Listed releases' roll-ups stay: stats of old releases remain, only their
/// drill-down rows go.
///
/// A thread of its own, `wd-retention`, waits on a semaphore between passes (as the alert and
/// rollout threads do): named in `top -H`, and woken by `stop()` at once.
final class RetentionJob: Sendable {
    private let store: any TelemetryStore
    private let retentionMilliseconds: Int64
    /// How long audit rows are kept; 0: forever.
    private let auditRetentionMilliseconds: Int64
    private let intervalSeconds: Double
    private let clock: @Sendable () -> Int64
    private let logger: Logger
    private let stopping = Locked(false)
    private let wakeUp = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    static let batch = 1_000

    /// `nil` when both periods are 0 (everything is kept).
    init?(store: any TelemetryStore, retentionDays: Int, auditRetentionDays: Int = 0, intervalSeconds: Double,
          clock: @escaping @Sendable () -> Int64, logger: Logger) {
        guard retentionDays > 0 || auditRetentionDays > 0 else { return nil }
        self.store = store
        retentionMilliseconds = Int64(retentionDays) * 86_400_000
        auditRetentionMilliseconds = Int64(auditRetentionDays) * 86_400_000
        self.intervalSeconds = intervalSeconds
        self.clock = clock
        self.logger = logger
        ServiceThread.start("wd-retention") { [self] in loop() }
    }

    /// Stops the thread; a pass in progress finishes its current batch first.
    func stop() {
        stopping.withLock { $0 = true }
        wakeUp.signal()
        finished.wait()
    }

    /// The first pass a few seconds after the start (at most the interval), then one per interval.
    private func loop() {
        var wait = min(intervalSeconds, 5)
        while true {
            _ = wakeUp.wait(timeout: .now() + .milliseconds(Int(wait * 1000)))
            if stopping.withLock({ $0 }) { break }
            run()
            wait = intervalSeconds
        }
        finished.signal()
    }

    /// One pass: audit rows past their period, then raw rows in batches until nothing is old enough.
    private func run() {
        let cutoff = clock() - retentionMilliseconds
        var total = 0
        if auditRetentionMilliseconds > 0 {
            do {
                let pruned = try store.pruneAudit(before: clock() - auditRetentionMilliseconds)
                if pruned > 0 { logger.info("retention: pruned \(pruned) audit rows") }
            } catch {
                logger.warning("retention of the audit log failed: \(error)")
            }
        }
        guard retentionMilliseconds > 0 else { return }
        do {
            while !stopping.withLock({ $0 }) {
                let deleted = try store.prune(receivedBefore: cutoff, limit: Self.batch)
                total += deleted
                if deleted == 0 { break }
                usleep(5_000)
            }
            while !stopping.withLock({ $0 }) {
                let deleted = try store.pruneDerived(receivedBefore: cutoff, limit: Self.batch)
                total += deleted
                if deleted == 0 { break }
                usleep(5_000)
            }
            // Every pass hands free pages back, not only one that pruned raw rows: whatever freed
            // them since (a side table's clean-up, a pass cut short) is given back by the next
            // one at the latest. Nothing to give back costs a pragma and a checkpoint.
            let size = try store.reclaimSpace()
            guard total > 0 else { return }
            logger.info("retention: pruned \(total) raw rows received before \(cutoff / 1000) (s since 1970); database now \(size / 1_048_576) MiB")
        } catch {
            logger.warning("retention pass failed after \(total) rows: \(error)")
        }
    }
}
