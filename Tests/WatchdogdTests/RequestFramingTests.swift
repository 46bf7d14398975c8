import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Request smuggling through ambiguous framing (issue 13, point 5): a request whose body length
/// can be read two ways gets one error response and the connection is closed, so nothing after
/// its headers can be taken for another request.
@Suite struct RequestFramingTests {
    /// Everything the server sent on one connection, and whether it closed it (rather than
    /// leaving it open until the client's receive timeout).
    struct Exchange {
        var bytes: [UInt8]
        var closed: Bool
        var text: String { String(decoding: bytes, as: UTF8.self) }
        /// Status codes of every response head on the connection.
        var statuses: [Int] {
            text.components(separatedBy: "\r\n").compactMap { line in
                line.hasPrefix("HTTP/1.") ? Int(line.split(separator: " ").dropFirst().first ?? "") : nil
            }
        }
    }

    static func send(_ raw: String, port: UInt16) throws -> Exchange {
        let socket = try connectToLoopback(port: port, timeoutSeconds: 5)
        defer { close(socket) }
        let bytes = Array(raw.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count == 0 || (count < 0 && errno == ECONNRESET) { return Exchange(bytes: received, closed: true) }
            if count < 0 { return Exchange(bytes: received, closed: false) }
            received += buffer[0..<count]
        }
    }

    @Test func ambiguousFramingGetsOneErrorAndTheConnectionIsClosed() throws {
        let daemon = try Daemon()
        let admin = try daemon.addToken(role: "admin")
        let smuggled = "GET /v1/apps HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(admin)\r\n\r\n"
        // `library`: a value libmicrohttpd cannot parse itself; it answers before the access
        // handler runs (0.9.75 writes that head twice, see RequestFraming), so only the status,
        // the close and the unanswered smuggled request are checked.
        let cases: [(name: String, head: String, body: String, status: Int, library: Bool)] = [
            ("Content-Length with chunked", "Content-Length: \(5 + smuggled.utf8.count)\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n" + smuggled, 400, false),
            ("chunked with Content-Length", "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", "0\r\n\r\n" + smuggled, 400, false),
            ("Content-Length 0 then N", "Content-Length: 0\r\nContent-Length: \(smuggled.utf8.count)\r\n", smuggled, 400, false),
            ("Content-Length repeated equal", "Content-Length: \(smuggled.utf8.count)\r\nContent-Length: \(smuggled.utf8.count)\r\n", smuggled, 400, false),
            ("unknown coding", "Transfer-Encoding: gzip\r\n", smuggled, 501, false),
            ("coding before chunked", "Transfer-Encoding: gzip, chunked\r\n", "0\r\n\r\n" + smuggled, 501, false),
            ("chunked twice", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n" + smuggled, 400, false),
            ("Content-Length list", "Content-Length: 0, \(smuggled.utf8.count)\r\n", smuggled, 400, true),
            ("negative length", "Content-Length: -5\r\n", smuggled, 400, true),
            ("hexadecimal length", "Content-Length: 0x10\r\n", smuggled, 400, true),
            ("two numbers", "Content-Length: 1 2\r\n", smuggled, 400, true),
            ("twenty digits", "Content-Length: 99999999999999999999\r\n", smuggled, 413, true),
            ("plus sign", "Content-Length: +5\r\n", smuggled, 400, true),
        ]
        for method in ["POST", "GET"] {
            for testCase in cases {
                let started = Date()
                let exchange = try Self.send("\(method) /healthz HTTP/1.1\r\nHost: x\r\n\(testCase.head)\r\n\(testCase.body)", port: daemon.port)
                let label = "\(method) \(testCase.name)"
                if testCase.library {
                    #expect(!exchange.statuses.isEmpty && Set(exchange.statuses) == [testCase.status], "\(label): \(exchange.text.prefix(300))")
                } else {
                    #expect(exchange.statuses == [testCase.status], "\(label): \(exchange.text.prefix(300))")
                    #expect(exchange.text.contains(testCase.status == 501 ? "unsupported_transfer_encoding" : "ambiguous_framing"), "\(label)")
                }
                let closed = exchange.closed
                #expect(closed, "\(label): the connection stayed open")
                print("framing: \(label) → \(exchange.statuses), closed \(closed) after \(Int(Date().timeIntervalSince(started) * 1000)) ms")
                #expect(exchange.text.lowercased().contains("connection: close"), "\(label)")
                #expect(!exchange.text.contains("com.example") && !exchange.text.contains("\"apps\""), "\(label): the smuggled request was answered")
            }
        }
        // Well-framed requests on the same server still work, chunked ones included.
        #expect(try daemon.client.request("GET", "/healthz").status == 200)
        let chunked = try Self.send("POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n", port: daemon.port)
        #expect(chunked.statuses == [405])
    }
}
