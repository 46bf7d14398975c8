import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// One address that never finishes its bodies (issue 13, point 1): 256 connections each send
/// all but 8 bytes of a 1 MiB body and stop. Bodies used to be buffered before routing or
/// authentication, into one budget for all clients, so a single address without a token made
/// every other client's post a 503. With back-pressure (issue 26) the address holds its share
/// of the body memory (2 of 32 MiB), its other bodies wait unread, and everyone else's posts
/// pass them.
@Suite(.serialized) struct BodyBudgetTests {
    /// A socket connected from `source` (another loopback address) to the daemon.
    static func connect(from source: String, port: UInt16) -> Int32? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        _ = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = port.bigEndian
        target.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &target) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard connected == 0 else { close(socket); return nil }
        return socket
    }

    /// Opens `count` connections from 127.0.0.2, each sending `head` and all but 8 bytes of a
    /// 1 MiB body, without waiting on any: past the body memory the daemon leaves bodies unread
    /// (back-pressure), so each socket takes what the kernel buffers and the next is served.
    /// Sends until nothing moved for a second; returns the sockets open, and how many body bytes
    /// the kernel took for the daemon.
    static func stall(_ head: (Int) -> String, count: Int, port: UInt16) -> (sockets: [Int32], sent: Int) {
        let body = [UInt8](repeating: UInt8(ascii: " "), count: (1 << 20) - 8)
        var sockets: [Int32] = []
        var pending: [[UInt8]] = []
        var offsets: [Int] = []
        var heads: [Int] = []
        var refused: Set<Int> = []
        for index in 0..<count {
            guard let socket = connect(from: "127.0.0.2", port: port) else { continue }
            sockets.append(socket)
            pending.append(Array(head(index).utf8) + body)
            offsets.append(0)
            heads.append(head(index).utf8.count)
        }
        var lastProgress = Date()
        while Date().timeIntervalSince(lastProgress) < 1 {
            var moved = false
            for (slot, socket) in sockets.enumerated() where offsets[slot] < pending[slot].count && !refused.contains(slot) {
                let written = pending[slot][offsets[slot]...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                if written > 0 {
                    offsets[slot] += written
                    moved = true
                } else if written == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) {
                    refused.insert(slot)  // refused early and closed
                }
            }
            if moved { lastProgress = Date() } else { usleep(10_000) }
        }
        let sent = zip(offsets, heads).reduce(0) { $0 + max(0, $1.0 - $1.1) }
        return (sockets, sent)
    }

    static func legitimatePosts(_ daemon: Daemon, key: String) throws -> (statuses: [Int: Int], latencies: [Double]) {
        var statuses: [Int: Int] = [:]
        var latencies: [Double] = []
        for _ in 0..<20 {
            let reports = try (0..<5).map { _ in try Fixtures.freshReport() }
            let started = Date()
            let status = try daemon.client.postJSON("/v1/reports", token: key, json: ["reports": reports]).status
            latencies.append(Date().timeIntervalSince(started))
            statuses[status, default: 0] += 1
        }
        return (statuses, latencies.sorted())
    }

    @Test(arguments: ["no token", "the app's ingest key"])
    func oneAddressTricklingBodiesDoesNotStopIngestForOthers(credential: String) throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let before = HostileClientTests.residentKiB(daemon.process.processIdentifier)
        let authorization = credential == "no token" ? "" : "Authorization: Bearer \(key)\r\n"
        let (sockets, sent) = Self.stall({ index in
            let path = credential == "no token" && index % 2 == 0 ? "/healthz" : "/v1/reports"
            return "POST \(path) HTTP/1.1\r\nHost: x\r\n\(authorization)Content-Type: application/json\r\nContent-Length: \(1 << 20)\r\n\r\n"
        }, count: 256, port: daemon.port)
        defer { sockets.forEach { close($0) } }
        let rss = HostileClientTests.residentKiB(daemon.process.processIdentifier)
        let (statuses, latencies) = try Self.legitimatePosts(daemon, key: key)
        print("""
            body budget (\(credential)): \(sockets.count) connections from 127.0.0.2 sent \(sent >> 20) MiB of unfinished bodies; \
            daemon RSS \(before / 1024) → \(rss / 1024) MiB; legitimate 5-report posts from 127.0.0.1: \(statuses), \
            p50 \(Int(latencies[latencies.count / 2] * 1000)) ms, worst \(Int((latencies.last ?? 0) * 1000)) ms
            """)
        #expect(statuses == [202: 20], "legitimate posts: \(statuses)")
        #expect(try daemon.storedReportCount() == 100)
    }
}
