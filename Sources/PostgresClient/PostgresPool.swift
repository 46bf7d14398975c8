import Foundation
import Locking

/// Connections to one database, handed out one caller at a time. At most `capacity` are open;
/// a caller beyond that waits. A connection that broke is dropped and replaced on next use.
///
/// When a call finds the database gone (`PostgresError.isConnectionLoss`), every idle
/// connection is dropped with it (they share its fate: stale sockets are what kept a healed
/// node waiting 24 s) and the pool turns *unreachable*: calls fail at once with
/// `PostgresError.unreachable` instead of each waiting out its own timeout, until `probe`
/// (which `PostgresProbe` runs twice a second) gets a round trip through again.
public final class PostgresPool: Sendable {
    /// The connection string or `postgres://` URI.
    public let url: String
    public let capacity: Int
    /// The deadlines every connection of the pool is opened with.
    public let deadlines: PostgresDeadlines
    private let idle = Locked<[PostgresConnection]>([])
    private let slots: DispatchSemaphore
    let health = Locked(PostgresHealth())
    private let observers = Locked<[@Sendable (PostgresReachability) -> Void]>([])

    /// Opens one connection at once, so a wrong URL or a server that is down fails here.
    public init(url: String, capacity: Int, deadlines: PostgresDeadlines = .standard) throws {
        self.url = url
        self.deadlines = deadlines
        self.capacity = max(1, capacity)
        slots = DispatchSemaphore(value: self.capacity)
        let first = try PostgresConnection(url: url, deadlines: deadlines)
        idle.withLock { $0.append(first) }
        _ = health.withLock { $0.succeeded(wrote: true) }
    }

    /// Runs `body` with a connection of its own; fails at once while the database is unreachable.
    public func withConnection<Result>(_ body: (PostgresConnection) throws -> Result) throws -> Result {
        if let refusal = health.withLock({ $0.refusal() }) { throw refusal }
        return try run(wrote: false, body)
    }

    /// Runs `body` whatever the pool's state, and marks the database reachable when it
    /// succeeds (with `wrote`: the call committed a write, which readiness waits for).
    public func probe<Result>(wrote: Bool, _ body: (PostgresConnection) throws -> Result) throws -> Result {
        try run(wrote: wrote, body)
    }

    /// Runs `body` in a transaction. A deadlock or serialization failure — the server rolled the
    /// transaction back, so nothing of it is stored — runs it again, up to `attempts` times in
    /// all. A lost connection is not retried: whether its `COMMIT` landed is unknown.
    public func transaction<Result>(attempts: Int = 5, _ body: (PostgresConnection) throws -> Result) throws -> Result {
        var attempt = 1
        while true {
            do {
                if let refusal = health.withLock({ $0.refusal() }) { throw refusal }
                return try run(wrote: true) { connection in try connection.transaction { try body(connection) } }
            } catch let error as PostgresError where error.isRetryable && attempt < attempts {
                attempt += 1
                usleep(UInt32.random(in: 1_000...(5_000 * UInt32(attempt))))
            }
        }
    }

    /// The database as this pool last reached it.
    public var reachability: PostgresReachability { health.withLock { $0.reachability } }

    /// Calls `observer` on each change between reachable and unreachable (on the thread that
    /// saw it), so the change is logged once, not once per request.
    public func observe(_ observer: @escaping @Sendable (PostgresReachability) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// Closes the idle connections (those in use close when given back after this).
    public func close() {
        idle.withLock { $0.removeAll() }
    }

    private func run<Result>(wrote: Bool, _ body: (PostgresConnection) throws -> Result) throws -> Result {
        slots.wait()
        defer { slots.signal() }
        do {
            let connection = try idle.withLock { $0.popLast() } ?? PostgresConnection(url: url, deadlines: deadlines)
            let result: Result
            do {
                result = try body(connection)
            } catch {
                giveBack(connection)
                throw error
            }
            giveBack(connection)
            record(health.withLock { $0.succeeded(wrote: wrote) })
            return result
        } catch let error as PostgresError where error.isConnectionLoss {
            idle.withLock { $0.removeAll() }
            record(health.withLock { $0.failed(error) })
            throw error
        }
    }

    private func record(_ change: PostgresReachability?) {
        guard let change else { return }
        for observer in observers.withLock({ $0 }) { observer(change) }
    }

    private func giveBack(_ connection: PostgresConnection) {
        guard !connection.isBroken else { return }
        idle.withLock { $0.append(connection) }
    }
}
