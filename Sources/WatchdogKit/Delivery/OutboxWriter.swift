import Dispatch
import Foundation
import Locking
import WatchdogWire

/// The agent's way into the outbox, off the main thread: reports and session starts are handed
/// over (`enqueue`) and written — `fsync` and rename, a few milliseconds on a busy flash — on a
/// serial queue of their own, in the order they came. A report that precedes a deliberate crash
/// is written synchronously instead (`persist`), after everything handed over before it: the
/// report is on disk before the crash, as before.
///
/// What cannot be written — the device locked before its first unlock after boot (the
/// protected outbox cannot be opened), a full disk — is kept in memory and written on a later
/// try (`retryPending`, each tick, and when protected data becomes available), oldest first.
/// Bounded: past `limit` items held, the oldest is given up and logged.
///
/// `@unchecked Sendable`: its state is behind a lock, and a `DispatchQueue` is thread-safe (the
/// iOS 16.5 SDK does not mark it `Sendable` yet).
final class OutboxWriter: ReportSink, @unchecked Sendable {
    enum Item: Sendable {
        case report(Report)
        case session(SessionStart)
    }

    private struct State {
        var held: [Item] = []
        var saved = 0
    }

    let outbox: Outbox
    let limit: Int
    private let logger: TaggedLogger
    private let queue: DispatchQueue
    private let state = Locked(State())

    /// - Parameter queue: a serial queue the writes run on (its own by default).
    init(outbox: Outbox, logger: TaggedLogger, limit: Int = 200, queue: DispatchQueue = DispatchQueue(label: "WatchdogKit.outbox-writer", qos: .utility)) {
        self.outbox = outbox
        self.logger = logger.child("outbox")
        self.limit = limit
        self.queue = queue
    }

    /// Reports written so far.
    var count: Int { state.withLock { $0.saved } }

    /// Items waiting for a later try (not counting those still queued).
    var heldCount: Int { state.withLock { $0.held.count } }

    /// Writes `report` now, after everything handed over before it; throws when it cannot be
    /// written (nothing was). For the report a deliberate crash follows.
    func persist(_ report: Report) throws {
        try queue.sync {
            retryHeld()
            try outbox.persist(report)
            state.withLock { $0.saved += 1 }
        }
    }

    func keepForRetry(_ report: Report) {
        hold(.report(report))
    }

    /// Writes `report` on the writer's queue; a failure keeps it for a later try.
    func enqueue(_ report: Report) {
        enqueue(.report(report))
    }

    /// Writes a session start on the writer's queue; a failure keeps it for a later try.
    func enqueue(_ session: SessionStart) {
        enqueue(.session(session))
    }

    private func enqueue(_ item: Item) {
        queue.async { [self] in
            retryHeld()
            if state.withLock({ !$0.held.isEmpty }) {
                hold(item)
                return
            }
            do {
                try write(item)
            } catch {
                logger.log("could not save \(Self.name(item)), kept for a later try: \(error)")
                hold(item)
            }
        }
    }

    /// Retries what is held, on the writer's queue.
    func retryPending() {
        queue.async { [self] in retryHeld() }
    }

    /// Returns once everything handed over so far has been written or held.
    func flush() {
        queue.sync {}
    }

    /// Forgets everything held or queued, then runs `body` on the writer's queue (the outbox
    /// emptied with nothing written behind its back).
    func discardAll(then body: () -> Void) {
        queue.sync {
            state.withLock { $0.held.removeAll() }
            body()
        }
    }

    /// Called on the writer's queue: writes what is held, oldest first; stops at the first
    /// failure (the outbox is still not writable) and keeps the rest.
    private func retryHeld() {
        while let item = state.withLock({ $0.held.first }) {
            do {
                try write(item)
            } catch {
                return
            }
            state.withLock { _ = $0.held.removeFirst() }
            logger.log("saved \(Self.name(item)) on a later try")
        }
    }

    private func write(_ item: Item) throws {
        switch item {
        case .report(let report):
            try outbox.persist(report)
            state.withLock { $0.saved += 1 }
        case .session(let session):
            try outbox.persist(session)
        }
    }

    private func hold(_ item: Item) {
        let dropped: Item? = state.withLock { state in
            state.held.append(item)
            return state.held.count > limit ? state.held.removeFirst() : nil
        }
        if let dropped { logger.log("gave up \(Self.name(dropped)): more than \(limit) items waiting for the outbox") }
    }

    private static func name(_ item: Item) -> String {
        switch item {
        case .report(let report): "report \(report.id)"
        case .session(let session): "session start \(session.id)"
        }
    }
}
