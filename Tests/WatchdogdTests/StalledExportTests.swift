import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Exports that are started and never read (issue 13, point 9): each held a page of reports
/// and a share of libmicrohttpd's two threads, so 200 of them raised memory by hundreds of
/// megabytes and made everyone wait. A credential may now run two exports at a time.
@Suite(.serialized) struct StalledExportTests {
    /// Sends an export request on a socket with a tiny receive buffer, reads the status line
    /// and stops reading: the export stalls once the socket buffers are full.
    static func stalledExport(port: UInt16, token: String) -> (socket: Int32, status: Int)? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var small: Int32 = 4096
        setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = port.bigEndian
        target.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &target) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard connected == 0 else { close(socket); return nil }
        let request = Array("GET /v1/apps/com.example.mail/reports.ndjson HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var head = [UInt8](repeating: 0, count: 12)
        var got = 0
        while got < 12 {
            let count = head[got...].withUnsafeMutableBytes { recv(socket, $0.baseAddress, 12 - got, 0) }
            if count <= 0 { break }
            got += count
        }
        let status = Int(String(decoding: head[9..<min(12, max(9, got))], as: UTF8.self)) ?? 0
        return (socket, status)
    }

    @Test func twoHundredStalledExportsOfOneTokenDoNotTakeMemoryOrTheThreads() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let exporter = try daemon.addToken(role: "viewer", name: "exporter")
        let viewer = try daemon.addToken(role: "viewer", name: "dashboard")
        for _ in 0..<10 {
            let reports = try (0..<500).map { _ in try Fixtures.freshReport() }
            #expect(try daemon.client.postJSON("/v1/reports", token: key, json: ["reports": reports]).status == 202)
        }
        func normalLatencies() throws -> [Double] {
            var latencies: [Double] = []
            for _ in 0..<20 {
                let started = Date()
                #expect(try daemon.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer).status == 200)
                latencies.append(Date().timeIntervalSince(started))
            }
            return latencies.sorted()
        }
        let quiet = try normalLatencies()
        let before = HostileClientTests.residentKiB(daemon.process.processIdentifier)
        var stalled: [Int32] = []
        defer { stalled.forEach { close($0) } }
        var statuses: [Int: Int] = [:]
        for _ in 0..<200 {
            guard let (socket, status) = Self.stalledExport(port: daemon.port, token: exporter) else { continue }
            statuses[status, default: 0] += 1
            if status == 200 { stalled.append(socket) } else { close(socket) }
        }
        let during = try normalLatencies()
        let rss = HostileClientTests.residentKiB(daemon.process.processIdentifier)
        print("""
            stalled exports: 200 started by one viewer token → \(statuses); daemon RSS \(before / 1024) → \(rss / 1024) MiB; \
            another viewer's GET …/releases p50 \(String(format: "%.1f", quiet[10] * 1000)) ms before, \
            \(String(format: "%.1f", during[10] * 1000)) ms with the exports stalled (worst \(Int(during[19] * 1000)) ms)
            """)
        #expect(statuses[200] == 2, "\(statuses)")
        #expect(statuses[429] == 198, "\(statuses)")
        // Another credential still exports.
        let other = try daemon.client.request("GET", "/v1/apps/com.example.mail/reports.ndjson", token: viewer)
        #expect(other.status == 200)
        // A slot comes back when its export's connection goes away.
        stalled.forEach { close($0) }
        stalled = []
        var freed = 0
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            freed = try daemon.client.request("GET", "/v1/apps/com.example.mail/reports.ndjson?kind=interaction_lock", token: exporter).status
            if freed == 200 { break }
        }
        #expect(freed == 200)
    }
}
