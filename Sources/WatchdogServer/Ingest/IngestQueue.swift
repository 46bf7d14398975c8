import Dispatch
import Foundation
import Logging
import Locking
import WatchdogStore

/// The one writer: requests hand it their batches, and it commits whatever has queued up
/// since its last commit in a single transaction (group commit), then tells each request
/// its counts. A `202` is sent only from that completion, so it always means "committed".
///
/// With one transaction per request, single-report posts are bounded by SQLite's commit rate
/// (~20k/s with synchronous=NORMAL, fewer with FULL); sharing commits lifts that bound.
final class IngestQueue: Sendable {
    typealias Completion = @Sendable (Result<IngestOutcome, any Error>) -> Void

    private struct Job {
        var batch: IngestBatch
        var completion: Completion
    }

    private struct State {
        var jobs: [Job] = []
        var pendingItems = 0
        var stopping = false
        var lastFailure: String?
        /// Rounds finished: a commit, or a wake-up with nothing to do (`makesProgress`).
        var rounds: UInt64 = 0
    }

    /// Why a batch was not queued.
    enum Refusal: Error {
        case full
        case stopped
        /// The database is known to be unreachable: the batch would only wait for it.
        case unreachable(StoreReachability)
    }

    private let store: any TelemetryStore
    private let logger: Logger
    private let state = Locked(State())
    private let wakeUp = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// Items in one transaction at most; more wait for the next one.
    private let itemsPerCommit: Int
    /// Items waiting at most; past it requests are refused (503) instead of growing memory.
    let capacity: Int

    /// Called after each successful commit with the number of items it stored (metrics).
    private let onCommit: @Sendable (Int) -> Void

    init(store: any TelemetryStore, logger: Logger, itemsPerCommit: Int = 5_000, capacity: Int = 100_000, onCommit: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.store = store
        self.onCommit = onCommit
        self.logger = logger
        self.itemsPerCommit = itemsPerCommit
        self.capacity = capacity
        ServiceThread.start("wd-writer") { [self] in run() }
    }

    /// Items waiting for the writer.
    var depth: Int { state.withLock { $0.pendingItems } }

    /// Queues a batch; `completion` runs on the writer's thread once it is committed or failed.
    func submit(_ batch: IngestBatch, completion: @escaping Completion) throws(Refusal) {
        if let reachability = store.reachability, !reachability.isReachable { throw .unreachable(reachability) }
        let refusal: Refusal? = state.withLock { state in
            if state.stopping { return .stopped }
            if state.pendingItems + batch.count > capacity { return .full }
            state.jobs.append(Job(batch: batch, completion: completion))
            state.pendingItems += batch.count
            return nil
        }
        if let refusal { throw refusal }
        wakeUp.signal()
    }

    /// Commits everything already queued, refuses new batches, and stops the writer.
    func stop() {
        state.withLock { $0.stopping = true }
        wakeUp.signal()
        finished.wait()
    }

    private func run() {
        while true {
            wakeUp.wait()
            while true {
                let (jobs, stopping) = takeJobs()
                if jobs.isEmpty {
                    if stopping {
                        finished.signal()
                        return
                    }
                    state.withLock { $0.rounds &+= 1 }
                    break
                }
                commit(jobs)
                state.withLock { $0.rounds &+= 1 }
            }
        }
    }

    private func takeJobs() -> ([Job], Bool) {
        state.withLock { state in
            var taken = 0
            var items = 0
            while taken < state.jobs.count, taken == 0 || items + state.jobs[taken].batch.count <= itemsPerCommit {
                items += state.jobs[taken].batch.count
                taken += 1
            }
            let jobs = Array(state.jobs.prefix(taken))
            state.jobs.removeFirst(taken)
            state.pendingItems -= items
            return (jobs, state.stopping)
        }
    }

    private func commit(_ jobs: [Job]) {
        do {
            let outcomes = try store.ingest(jobs.map(\.batch))
            state.withLock { $0.lastFailure = nil }
            // A refused batch (its assertion's counter did not move on) stored none of its items.
            onCommit(zip(jobs, outcomes).reduce(0) { items, done in done.1 == .counterNotIncreasing ? items : items + done.0.batch.count })
            for (job, outcome) in zip(jobs, outcomes) { job.completion(.success(outcome)) }
        } catch {
            // Items are validated and inserted with ON CONFLICT DO NOTHING, so a failure comes
            // from the environment (disk full, I/O error, locked file), not from one request's
            // data: every request of the group gets 503 and retries; ingest is idempotent.
            // A lost database is logged once, when it is found lost (`StoreOutage`).
            if !PostgresStore.isUnreachable(error) { logger.error("group commit of \(jobs.count) requests failed: \(error)") }
            state.withLock { $0.lastFailure = "\(error)" }
            for job in jobs { job.completion(.failure(error)) }
        }
    }

    /// Wakes the writer and waits up to `seconds` for it to finish a round: false while it is
    /// stuck in a commit (systemd's watchdog pings only while this is true).
    func makesProgress(withinSeconds seconds: Double) -> Bool {
        let before = state.withLock { $0.rounds }
        wakeUp.signal()
        let deadline = DispatchTime.now() + seconds
        while state.withLock({ $0.rounds }) == before {
            guard DispatchTime.now() < deadline else { return false }
            usleep(2_000)
        }
        return true
    }

    /// Why the last commit failed, or `nil` when it succeeded.
    var lastFailure: String? { state.withLock { $0.lastFailure } }
}
