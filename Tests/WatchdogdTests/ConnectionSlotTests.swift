import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Connections that hold a slot without ever completing a request (issue 13, point 3): one
/// header byte every few seconds kept a slot forever (the idle timeout restarts with every
/// byte), and idle sockets from a few addresses filled every slot for the 30 s idle timeout.
@Suite(.serialized) struct ConnectionSlotTests {
    /// Whether the server has closed `socket` (end of stream or reset), without blocking.
    static func isClosed(_ socket: Int32) -> Bool {
        var byte: UInt8 = 0
        let count = recv(socket, &byte, 1, Int32(MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    /// `watchdog_connections_shed_total` for `reason` in the daemon's `/metrics` (-1: no such line).
    static func shed(_ daemon: Daemon, _ reason: String) throws -> Int {
        let prefix = "watchdog_connections_shed_total{reason=\"\(reason)\"} "
        let line = try daemon.client.request("GET", "/metrics").text.split(separator: "\n").first { $0.hasPrefix(prefix) }
        return line.flatMap { Int($0.dropFirst(prefix.count)) } ?? -1
    }

    /// The same, read again until it reaches `expected` (at most 5 s): the timer counts a
    /// connection just after shutting its socket down, so a client can see the close first.
    static func shed(_ daemon: Daemon, _ reason: String, awaiting expected: Int) throws -> Int {
        let deadline = Date().addingTimeInterval(5)
        var value = try shed(daemon, reason)
        while value < expected, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            value = try shed(daemon, reason)
        }
        return value
    }

    @Test func headersTrickledAByteASecondAreCutOffAtTheHeaderDeadline() throws {
        let daemon = try Daemon()
        let socket = try #require(BodyBudgetTests.connect(from: "127.0.0.2", port: daemon.port))
        defer { close(socket) }
        let request = Array("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: \(String(repeating: "p", count: 100))\r\n\r\n".utf8)
        let started = Date()
        var closedAfter: Double?
        // The attack's own pace: one byte a second, for up to 20 s (the default deadline is 10 s).
        for index in 0..<20 {
            if Self.isClosed(socket) { closedAfter = Date().timeIntervalSince(started); break }
            _ = request[index...index].withUnsafeBytes { send(socket, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) }
            Thread.sleep(forTimeInterval: 1)
        }
        if closedAfter == nil, Self.isClosed(socket) { closedAfter = Date().timeIntervalSince(started) }
        print("header deadline: a client sending a header byte a second was cut off after \(closedAfter.map { String(format: "%.1f s", $0) } ?? "more than 20 s (never)")")
        #expect(closedAfter != nil, "the trickling connection was never closed")
        #expect(try daemon.client.request("GET", "/healthz").status == 200)
        #expect(try Self.shed(daemon, "header_deadline", awaiting: 1) == 1, "the drop is counted as the header deadline's")
        #expect(try Self.shed(daemon, "keep_alive_idle") == 0 && Self.shed(daemon, "pressure") == 0)
    }

    /// A kept-alive connection that sends no next request is closed at the header deadline too,
    /// and counted apart from clients that never completed their headers.
    @Test func aKeptAliveConnectionIdlePastTheHeaderDeadlineIsClosedAndCountedAsIdle() throws {
        let daemon = try Daemon(extraArguments: ["--header-timeout", "1"])
        let connection = try KeepAliveConnection(port: daemon.port, timeoutSeconds: 10, from: "127.0.0.2")
        try connection.write(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(try connection.readResponse()?.status == 200)
        // Its own bound, on failure only: the deadline is 1 s, swept every few hundred ms.
        let idleSince = Date()
        #expect(connection.answers(within: 10), "the idle kept-alive connection is still open after 10 s")
        #expect(connection.closedWithoutAnswer())
        let closedAfter = Date().timeIntervalSince(idleSince)
        let idle = try Self.shed(daemon, "keep_alive_idle", awaiting: 1)
        let counts = try ["header_deadline", "pressure"].map { "\($0) \(try Self.shed(daemon, $0))" }
        #expect(idle == 1, "closed after \(String(format: "%.1f", closedAfter)) s; keep_alive_idle \(idle), \(counts.joined(separator: ", "))")
        #expect(try Self.shed(daemon, "header_deadline") == 0)
    }

    @Test func idleConnectionsFillingEverySlotAreShedForNewClients() throws {
        let daemon = try Daemon(extraArguments: ["--connection-limit", "64", "--per-ip-connection-limit", "16"])
        var idle: [Int32] = []
        defer { idle.forEach { close($0) } }
        // Four addresses × 16 connections that connect and send nothing: every slot taken.
        for address in ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"] {
            for _ in 0..<16 {
                if let socket = BodyBudgetTests.connect(from: address, port: daemon.port) { idle.append(socket) }
            }
        }
        #expect(idle.count == 64)
        let started = Date()
        var servedAfter: Double?
        var attempts = 0
        // A new client retries (as a browser or WatchdogKit would) for up to 15 s.
        while Date().timeIntervalSince(started) < 15 {
            attempts += 1
            var client = daemon.client
            client.timeoutSeconds = 2
            if (try? client.request("GET", "/healthz"))?.status == 200 {
                servedAfter = Date().timeIntervalSince(started)
                break
            }
        }
        let shed = idle.filter { Self.isClosed($0) }.count
        print("connection slots: 64 of 64 taken by idle sockets from 4 addresses; a new client was served after \(servedAfter.map { String(format: "%.1f s", $0) } ?? "more than 15 s (never)") and \(attempts) attempts; \(shed) idle sockets shed")
        #expect(servedAfter != nil, "a new client found no slot for 15 s")
        #expect(try Self.shed(daemon, "pressure", awaiting: 1) >= 1, "idle sockets shed under pressure are counted as such")
    }
}
