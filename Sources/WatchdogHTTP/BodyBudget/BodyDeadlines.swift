import CMicroHTTPD
import Locking
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A deadline for a request's body, once its `BodyBudget` reservation is granted: without one,
/// libmicrohttpd's connection timeout restarts with every byte, so a client sending one body
/// byte every few seconds kept its reservation — up to its share of the body memory — for
/// ever, and sixteen addresses doing so held all of it while everyone else waited and got 503.
///
/// The whole body must be in within `baseSeconds` plus its reserved bytes at
/// `minBytesPerSecond` (a chunked body reserves the largest allowed). Past that the timer shuts
/// the socket down, as `ConnectionDeadlines` does for headers (`shutdown(2)`: libmicrohttpd
/// sees the end of stream, closes the connection and completes the request, which gives the
/// reservation back), and `sweep` returns the connection for the log. The deadline is armed
/// when the reservation is granted (on the headers, or when a waiting request is resumed) and
/// disarmed once the body is complete, so the wait for the group commit is not counted.
/// libmicrohttpd notifies a close (and so takes the entry out, under the lock the sweep holds)
/// before it closes the descriptor: a descriptor number reused by a new connection is never
/// shut down by mistake. The timer is the server's `SweepTimer`.
final class BodyDeadlines: Sendable {
    /// A connection cut off by `sweep`.
    struct Missed: Sendable {
        var client: String
        var bytes: Int
        var seconds: Double
    }

    private struct Entry {
        var socket: Int32
        var missed: Missed
        var due: Double
    }

    let baseSeconds: Double
    let minBytesPerSecond: Double
    private let entries = Locked<[UInt: Entry]>([:])

    init(baseSeconds: Double, minBytesPerSecond: Double) {
        self.baseSeconds = baseSeconds
        self.minBytesPerSecond = minBytesPerSecond
    }

    /// Seconds a body of `bytes` may take once its reservation is granted.
    func allowance(for bytes: Int) -> Double {
        baseSeconds + Double(bytes) / minBytesPerSecond
    }

    /// `reservation` was granted: its body must be in by the deadline.
    func granted(_ reservation: BodyReservation, on connection: OpaquePointer, now: Double) {
        let socket = watchdog_connection_fd(connection)
        guard socket >= 0 else { return }
        let seconds = allowance(for: reservation.requested)
        let entry = Entry(socket: socket, missed: Missed(client: reservation.client, bytes: reservation.requested, seconds: seconds),
                          due: now + seconds)
        entries.withLock { $0[Self.key(connection)] = entry }
    }

    /// The body is complete (or the request was answered without it).
    func bodyReceived(_ connection: OpaquePointer) {
        _ = entries.withLock { $0.removeValue(forKey: Self.key(connection)) }
    }

    func closed(_ connection: OpaquePointer) {
        bodyReceived(connection)
    }

    /// Shuts down the sockets of connections whose body is past its deadline; returns them.
    func sweep(now: Double) -> [Missed] {
        entries.withLock { entries in
            var missed: [Missed] = []
            for (key, entry) in entries where now > entry.due {
                shutdown(entry.socket, Int32(SHUT_RDWR))
                entries[key] = nil
                missed.append(entry.missed)
            }
            return missed
        }
    }

    private static func key(_ connection: OpaquePointer) -> UInt {
        UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
    }
}
