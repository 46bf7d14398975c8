import Foundation
import Locking

/// Connections to one database, handed out one caller at a time. At most `capacity` are open;
/// a caller beyond that waits. A connection that broke is dropped and replaced on next use.
public final class PostgresPool: Sendable {
    /// The connection string or `postgres://` URI.
    public let url: String
    public let capacity: Int
    private let idle = Locked<[PostgresConnection]>([])
    private let slots: DispatchSemaphore

    /// Opens one connection at once, so a wrong URL or a server that is down fails here.
    public init(url: String, capacity: Int) throws {
        self.url = url
        self.capacity = max(1, capacity)
        slots = DispatchSemaphore(value: self.capacity)
        let first = try PostgresConnection(url: url)
        idle.withLock { $0.append(first) }
    }

    /// Runs `body` with a connection of its own.
    public func withConnection<Result>(_ body: (PostgresConnection) throws -> Result) throws -> Result {
        slots.wait()
        defer { slots.signal() }
        let connection = try idle.withLock { $0.popLast() } ?? PostgresConnection(url: url)
        do {
            let result = try body(connection)
            giveBack(connection)
            return result
        } catch {
            giveBack(connection)
            throw error
        }
    }

    /// Runs `body` in a transaction. A deadlock or serialization failure — the server rolled the
    /// transaction back, so nothing of it is stored — runs it again, up to `attempts` times in
    /// all. A lost connection is not retried: whether its `COMMIT` landed is unknown.
    public func transaction<Result>(attempts: Int = 5, _ body: (PostgresConnection) throws -> Result) throws -> Result {
        var attempt = 1
        while true {
            do {
                return try withConnection { connection in try connection.transaction { try body(connection) } }
            } catch let error as PostgresError where error.isRetryable && attempt < attempts {
                attempt += 1
                usleep(UInt32.random(in: 1_000...(5_000 * UInt32(attempt))))
            }
        }
    }

    /// Closes the idle connections (those in use close when given back after this).
    public func close() {
        idle.withLock { $0.removeAll() }
    }

    private func giveBack(_ connection: PostgresConnection) {
        guard !connection.isBroken else { return }
        idle.withLock { $0.append(connection) }
    }
}
