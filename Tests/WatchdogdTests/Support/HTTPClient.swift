import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A response as read off the socket.
struct Response {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }

    var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
    var errorMessage: String? { (json["error"] as? [String: Any])?["message"] as? String }
}

struct HTTPClientError: Error, CustomStringConvertible {
    var description: String
}

/// A minimal HTTP/1.1 client over a plain TCP socket: one connection per request, so tests
/// control every header and byte (Content-Length lies, chunked bodies, raw garbage).
struct HTTPClient {
    var port: UInt16
    var timeoutSeconds = 30
    /// The loopback address the connection is made from (127.x.y.z: every one is loopback on
    /// Linux), so the daemon sees another client, on another /24; `nil`: the kernel's choice.
    var source: String? = nil

    /// The same client, connecting from `source`.
    func from(_ source: String) -> HTTPClient {
        var copy = self
        copy.source = source
        return copy
    }

    func request(_ method: String, _ path: String, token: String? = nil, headers: [String: String] = [:], body: [UInt8] = []) throws -> Response {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        var headers = headers
        if headers["Content-Length"] == nil, headers["Transfer-Encoding"] == nil, !body.isEmpty || method == "POST" || method == "PATCH" {
            headers["Content-Length"] = String(body.count)
        }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        return try exchange(Array(head.utf8) + body)
    }

    func postJSON(_ path: String, token: String?, json: Any) throws -> Response {
        let data = Array(try JSONSerialization.data(withJSONObject: json))
        return try request("POST", path, token: token, headers: ["Content-Type": "application/json"], body: data)
    }

    /// Sends raw bytes and reads the response until the server closes the connection.
    func exchange(_ bytes: [UInt8]) throws -> Response {
        let socket = try connect()
        defer { close(socket) }
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { break }  // the server may answer early (413) and stop reading
            offset += sent
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return try parse(received)
    }

    private func connect() throws -> Int32 {
        try connectToLoopback(port: port, timeoutSeconds: timeoutSeconds, from: source)
    }

    private func parse(_ bytes: [UInt8]) throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else {
            throw HTTPClientError(description: "no complete response (\(bytes.count) bytes)")
        }
        let head = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw HTTPClientError(description: "bad status line \(head[0])")
        }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Array(bytes[(end + 4)...])
        if let length = headers["content-length"].flatMap(Int.init), body.count > length { body = Array(body.prefix(length)) }
        return Response(status: status, headers: headers, body: body)
    }
}

/// A TCP socket connected to 127.0.0.1:`port`, with send and receive timeouts.
func connectToLoopback(port: UInt16, timeoutSeconds: Int, from source: String? = nil) throws -> Int32 {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { throw HTTPClientError(description: "socket() failed") }
    var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
    setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    if let source {
        // Another loopback address (127.0.0.2, …): another client for per-address limits.
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        _ = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard result == 0 else {
        close(socket)
        throw HTTPClientError(description: "connect to port \(port) failed: errno \(errno)")
    }
    return socket
}
