import Foundation
import WatchdogWire

/// The agent's way into the outbox: saves reports and session starts, counts them, and keeps in
/// memory what could not be written — the device locked before its first unlock after boot
/// (the protected outbox cannot be opened then), a full disk — to write it on a later try
/// (`retryPending`, each tick) instead of losing it. Bounded: past `limit` items held, the
/// oldest is given up and logged.
final class RetryingSink: ReportSink {
    enum Item {
        case report(Report)
        case session(SessionStart)
    }

    let outbox: Outbox
    let limit: Int
    private let logger: TaggedLogger
    private(set) var count = 0
    private(set) var held: [Item] = []

    init(outbox: Outbox, logger: TaggedLogger, limit: Int = 200) {
        self.outbox = outbox
        self.logger = logger.child("outbox")
        self.limit = limit
    }

    func persist(_ report: Report) throws {
        try outbox.persist(report)
        count += 1
    }

    func keepForRetry(_ report: Report) {
        hold(.report(report))
    }

    /// Saves a session start, or holds it for a later try when the outbox cannot be written.
    func persistOrHold(_ session: SessionStart) {
        do {
            try outbox.persist(session)
        } catch {
            logger.log("could not save session start \(session.id), kept for a later try: \(error)")
            hold(.session(session))
        }
    }

    /// Writes what is held, oldest first; stops at the first failure (the outbox is still not
    /// writable) and keeps the rest.
    func retryPending() {
        while let item = held.first {
            do {
                switch item {
                case .report(let report):
                    try outbox.persist(report)
                    count += 1
                case .session(let session):
                    try outbox.persist(session)
                }
            } catch {
                return
            }
            held.removeFirst()
            logger.log("saved \(Self.name(item)) on a later try")
        }
    }

    private func hold(_ item: Item) {
        held.append(item)
        if held.count > limit {
            logger.log("gave up \(Self.name(held.removeFirst())): more than \(limit) items waiting for the outbox")
        }
    }

    private static func name(_ item: Item) -> String {
        switch item {
        case .report(let report): "report \(report.id)"
        case .session(let session): "session start \(session.id)"
        }
    }
}
