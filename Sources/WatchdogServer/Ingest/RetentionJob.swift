import Dispatch
import Foundation
import Logging
import Locking
import WatchdogStore

/// Prunes raw reports and session starts older than the retention period, in small batches in
/// the background (each a short transaction, so ingest keeps its turn at the writer), then
/// hands the freed pages back to the file system. Release roll-ups stay: stats of old releases
/// remain, only their drill-down rows go.
final class RetentionJob: Sendable {
    private let store: any TelemetryStore
    private let retentionMilliseconds: Int64
    private let clock: @Sendable () -> Int64
    private let logger: Logger
    // Touched only at init and stop; DispatchSource is thread-safe but not marked Sendable.
    nonisolated(unsafe) private let timer: DispatchSourceTimer
    private let running = Locked(false)
    static let batch = 1_000

    init?(store: any TelemetryStore, retentionDays: Int, intervalSeconds: Double, clock: @escaping @Sendable () -> Int64, logger: Logger) {
        guard retentionDays > 0 else { return nil }
        self.store = store
        retentionMilliseconds = Int64(retentionDays) * 86_400_000
        self.clock = clock
        self.logger = logger
        timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        timer.schedule(deadline: .now() + min(intervalSeconds, 5), repeating: intervalSeconds, leeway: .seconds(1))
        timer.setEventHandler { [weak self] in self?.run() }
        timer.resume()
    }

    func stop() {
        timer.cancel()
        // Let a pass in progress finish its current batch.
        while running.withLock({ $0 }) { usleep(10_000) }
    }

    /// One pass: batches until nothing is old enough.
    func run() {
        guard running.withLock({ busy in
            if busy { return false }
            busy = true
            return true
        }) else { return }
        defer { running.withLock { $0 = false } }
        let cutoff = clock() - retentionMilliseconds
        var total = 0
        do {
            while !timer.isCancelled {
                let deleted = try store.prune(receivedBefore: cutoff, limit: Self.batch)
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
