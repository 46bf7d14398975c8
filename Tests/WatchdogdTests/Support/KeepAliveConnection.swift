import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One persistent HTTP/1.1 connection: requests written as they come (pipelining allowed),
/// responses read one by one by their Content-Length.
final class KeepAliveConnection {
    private let socket: Int32
    private var buffer: [UInt8] = []

    /// Connected from `source` (another loopback address) when given.
    init(port: UInt16, timeoutSeconds: Int = 10, from source: String? = nil) throws {
        socket = try connectToLoopback(port: port, timeoutSeconds: timeoutSeconds, from: source)
    }

    deinit { close(socket) }

    static func post(_ path: String, token: String, body: [UInt8]) -> [UInt8] {
        Array("POST \(path) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
    }

    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw HTTPClientError(description: "send failed") }
            offset += sent
        }
    }

    /// The next response, or `nil` when the server closed the connection.
    func readResponse() throws -> Response? {
        let separator: [UInt8] = [13, 10, 13, 10]
        while true {
            if let end = (0..<max(0, buffer.count - 3)).first(where: { buffer[$0...].starts(with: separator) }) {
                let head = String(decoding: buffer[..<end], as: UTF8.self).components(separatedBy: "\r\n")
                var headers: [String: String] = [:]
                for line in head.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                let length = headers["content-length"].flatMap(Int.init) ?? 0
                while buffer.count < end + 4 + length { guard try fill() else { return nil } }
                let status = Int(head[0].split(separator: " ")[1]) ?? 0
                let body = Array(buffer[(end + 4)..<(end + 4 + length)])
                buffer.removeFirst(end + 4 + length)
                return Response(status: status, headers: headers, body: body)
            }
            guard try fill() else { return nil }
        }
    }

    /// Whether the server closed the connection (end of stream or reset) without sending
    /// anything, as opposed to sending bytes or leaving it open until the receive timeout.
    func closedWithoutAnswer() -> Bool {
        var byte: UInt8 = 0
        let count = recv(socket, &byte, 1, 0)
        return count == 0 || (count < 0 && errno == ECONNRESET)
    }

    /// Ends the connection from this side (the descriptor is closed on deinit).
    func hangUp() {
        shutdown(socket, Int32(SHUT_RDWR))
    }

    /// Whether the server sends something (or closes) within `seconds`.
    func answers(within seconds: Double) -> Bool {
        guard buffer.isEmpty else { return true }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, Int32(seconds * 1000)) > 0
    }

    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = recv(socket, &chunk, chunk.count, 0)
        if count == 0 { return false }
        if count < 0 { return false }
        buffer += chunk[0..<count]
        return true
    }
}
