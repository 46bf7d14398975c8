import CMicroHTTPD
import Locking
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A deadline for a request's headers, which libmicrohttpd 0.9.75 does not have: its
/// connection timeout restarts with every byte, so a client sending one header byte every
/// few seconds kept its slot forever, and idle sockets held every slot for the whole timeout.
///
/// A connection waits for headers from the moment it opens and from the moment its previous
/// request completed (keep-alive) until the access handler's first call. Past
/// `headerSeconds` — or `pressureSeconds` while more than `pressureAbove` connections are
/// open, so that idle sockets make room for new clients — a timer shuts its socket down
/// (`shutdown(2)`, not `close`: the descriptor stays libmicrohttpd's, which sees the end of
/// stream and closes the connection itself). libmicrohttpd notifies the close (and so takes
/// the entry out, under the same lock the timer holds) before it closes the descriptor, so a
/// descriptor number reused by a new connection is never shut down by mistake. The timer is
/// the server's `SweepTimer`.
final class ConnectionDeadlines: Sendable {
    private struct Entry {
        var socket: Int32
        var waitingSince: Double?
        /// Whether the connection has completed a request (kept alive) or is waiting for its first.
        var keptAlive = false
    }

    let headerSeconds: Double
    let pressureSeconds: Double
    let pressureAbove: Int
    private let entries = Locked<[UInt: Entry]>([:])

    init(headerSeconds: Double, pressureSeconds: Double = 1, pressureAbove: Int) {
        self.headerSeconds = headerSeconds
        self.pressureSeconds = pressureSeconds
        self.pressureAbove = pressureAbove
    }

    func opened(_ connection: OpaquePointer) {
        let socket = watchdog_connection_fd(connection)
        guard socket >= 0 else { return }
        let now = monotonicSeconds()
        entries.withLock { $0[Self.key(connection)] = Entry(socket: socket, waitingSince: now) }
    }

    func closed(_ connection: OpaquePointer) {
        _ = entries.withLock { $0.removeValue(forKey: Self.key(connection)) }
    }

    /// The access handler's first call: the headers are complete.
    func headersReceived(_ connection: OpaquePointer) {
        entries.withLock { $0[Self.key(connection)]?.waitingSince = nil }
    }

    /// A request completed: a kept-alive connection now waits for the next one's headers.
    func requestCompleted(_ connection: OpaquePointer) {
        let now = monotonicSeconds()
        entries.withLock { entries in
            entries[Self.key(connection)]?.waitingSince = now
            entries[Self.key(connection)]?.keptAlive = true
        }
    }

    /// Shuts down the sockets of connections past their deadline; returns why, one reason each.
    func sweep(now: Double) -> [ConnectionShedReason] {
        entries.withLock { entries in
            let underPressure = entries.count > pressureAbove
            let limit = underPressure ? pressureSeconds : headerSeconds
            var shed: [ConnectionShedReason] = []
            for (key, entry) in entries {
                guard let since = entry.waitingSince, now - since > limit else { continue }
                shutdown(entry.socket, Int32(SHUT_RDWR))
                entries[key]?.waitingSince = nil
                shed.append(underPressure && now - since <= headerSeconds ? .pressure : entry.keptAlive ? .keepAliveIdle : .headerDeadline)
            }
            return shed
        }
    }

    private static func key(_ connection: OpaquePointer) -> UInt {
        UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
    }
}

/// Why the header deadline closed a connection (`HTTPServerConfiguration.connectionShed`).
public enum ConnectionShedReason: String, Sendable, CaseIterable {
    /// A new connection's request headers were not complete within the header deadline: a
    /// client sending them slowly, or not at all.
    case headerDeadline = "header_deadline"
    /// A kept-alive connection sent no next request within the header deadline.
    case keepAliveIdle = "keep_alive_idle"
    /// More than three quarters of the connection slots were taken, and this connection had
    /// been waiting for headers past the short deadline that applies then.
    case pressure
}
