import Foundation
import Logging
import Testing
@testable import WatchdogServer
import WatchdogHTTP
#if canImport(Glibc)
import Glibc
#endif

/// libmicrohttpd refuses a header it cannot send (a value with a line break); the HTTP layer
/// turns that refusal into a logged 500 instead of sending the response without the header.
@Suite struct ResponseHeaderTests {
    @Test func aHeaderLibmicrohttpdRefusesBecomesA500AndTheServerKeepsServing() throws {
        var configuration = HTTPServerConfiguration(address: ListenAddress("127.0.0.1:0")!) { APIError.from($0).response }
        configuration.threads = 1
        let server = try HTTPServer(configuration: configuration, logger: Logger(label: "test")) { request, responder in
            // A file name taken from client data, with a line break smuggled in.
            let name = request.path == "/split" ? "a\r\nSet-Cookie: pwned=1" : "a.ndjson"
            responder.respond(HTTPResponse(status: 200, headers: [("Content-Disposition", "attachment; filename=\"\(name)\"")], body: Array("ok".utf8)))
        }
        defer { server.shutdown(drainSeconds: 1) }

        let split = try Self.get("/split", port: server.port)
        #expect(split.hasPrefix("HTTP/1.1 500 "), "\(split)")
        #expect(split.contains(#""code":"internal_error""#))
        #expect(!split.lowercased().contains("set-cookie"), "the smuggled header was not sent")
        #expect(!split.contains("Content-Disposition"), "nor the response it was part of")
        #expect(split.lowercased().contains("connection: close"))

        let fine = try Self.get("/fine", port: server.port)
        #expect(fine.hasPrefix("HTTP/1.1 200 "), "\(fine)")
        #expect(fine.contains("filename=\"a.ndjson\""))
    }

    /// One request on its own connection; everything the server sent until it closed.
    static func get(_ path: String, port: UInt16) throws -> String {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw ConnectFailed(port: port) }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    struct ConnectFailed: Error {
        var port: UInt16
    }
}
