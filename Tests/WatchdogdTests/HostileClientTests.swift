import Foundation
import Gzip
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Clients that try to exhaust the daemon: compressed bombs and connections that never finish.
@Suite(.serialized) struct HostileClientTests {
    static func residentKiB(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// gzip of `count` zero bytes, compressed a megabyte at a time (no gigabyte in memory).
    static func zeros(_ count: Int) throws -> [UInt8] {
        var members: [UInt8] = []
        let chunk = [UInt8](repeating: 0, count: 1 << 20)
        for _ in 0..<(count >> 20) { members += try Gzip.compress(chunk, level: 9) }
        return members
    }

    @Test func gzipBombsGet413AndLeaveMemoryFlat() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let headers = ["Content-Type": "application/json", "Content-Encoding": "gzip"]
        #expect(try daemon.client.request("GET", "/healthz").status == 200)
        let before = Self.residentKiB(daemon.process.processIdentifier)

        // 1 GiB of zeros: about 1 MiB on the wire, refused before or while inflating.
        let gigabyte = try Self.zeros(1 << 30)
        let big = try daemon.client.request("POST", "/v1/reports", token: key, headers: headers, body: gigabyte)
        #expect(big.status == 413)
        // 64 MiB of zeros: 64 KiB on the wire; inflation stops at the 1 MiB cap.
        let small = try Self.zeros(64 << 20)
        #expect(small.count < 1 << 20)
        for _ in 0..<5 {
            let response = try daemon.client.request("POST", "/v1/reports", token: key, headers: headers, body: small)
            #expect(response.status == 413)
            #expect(response.errorMessage?.contains("after gzip decompression") == true)
        }
        let growth = Self.residentKiB(daemon.process.processIdentifier) - before
        print("gzip bombs: 1 GiB bomb is \(gigabyte.count / 1024) KiB on the wire; daemon RSS grew \(growth) KiB")
        #expect(growth < 10 * 1024, "memory grew \(growth) KiB")
        #expect(try daemon.storedReportCount() == 0)
    }

    @Test func fiveHundredSlowClientsDoNotStopANormalOneFromBeingServed() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        // 500 connections from two other loopback addresses, each sending its headers a byte a second.
        var slow: [Int32] = []
        defer { slow.forEach { close($0) } }
        for index in 0..<500 {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var source = sockaddr_in()
            source.sin_family = sa_family_t(AF_INET)
            source.sin_addr.s_addr = inet_addr(index % 2 == 0 ? "127.0.0.2" : "127.0.0.3")
            _ = withUnsafePointer(to: &source) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            var target = sockaddr_in()
            target.sin_family = sa_family_t(AF_INET)
            target.sin_port = daemon.port.bigEndian
            target.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &target) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            if connected == 0 { slow.append(socket) } else { close(socket) }
        }
        #expect(slow.count >= 500)
        let request = Array("POST /v1/reports HTTP/1.1\r\nHost: x\r\n".utf8)
        var worst = 0.0
        for second in 0..<3 {
            for socket in slow { _ = request[second...second].withUnsafeBytes { send(socket, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) } }
            let started = Date()
            let response = try daemon.client.request("GET", "/v1/config?app=com.example.mail", token: key)
            worst = max(worst, Date().timeIntervalSince(started))
            #expect(response.status == 200)
            Thread.sleep(forTimeInterval: 1)
        }
        print("slow clients: \(slow.count) connections trickling headers; a normal request took at most \(Int(worst * 1000)) ms")
        // Not a latency target (the machine's load decides that): a server that queued the
        // normal client behind the slow ones would make it wait for their header deadline
        // (10 s) or the idle timeout (30 s); 2 s tells the two apart on a loaded machine.
        #expect(worst < 2, "a normal client waited \(Int(worst * 1000)) ms: queued behind the slow clients")
    }
}
