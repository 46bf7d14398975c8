import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A webhook receiver on loopback that misbehaves, over plain sockets so nothing in it buffers:
/// `.endless(status)` answers `status` with a `Content-Length` of 1 GiB and streams generated
/// bytes (64 KiB at a time, never held whole) until the client cuts the connection or all is
/// sent; `.silent` reads the request and never answers, holding the connection open;
/// `.redirect(to)` answers `307` with `Location: to`.
final class HostileHook: @unchecked Sendable {
    enum Behaviour {
        case endless(status: Int)
        case silent
        case redirect(to: String)
    }

    static let bodyBytes = 1 << 30

    let port: UInt16
    private let listener: Int32
    private let behaviour: Behaviour
    private let state = Locked((requests: 0, bytesSent: 0, connections: [Int32](), stopped: false))

    init(_ behaviour: Behaviour) throws {
        self.behaviour = behaviour
        let listener = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw HTTPClientError(description: "socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        guard bound, listen(listener, 16) == 0 else {
            close(listener)
            throw HTTPClientError(description: "bind/listen failed: errno \(errno)")
        }
        self.listener = listener
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// The URL to register as a hook.
    var url: String { "http://127.0.0.1:\(port)/hook" }
    /// Requests read so far.
    var requests: Int { state.value.requests }
    /// Body bytes written before the client cut the connection.
    var bytesSent: Int { state.value.bytesSent }

    /// Closes the listener and every connection.
    func stop() {
        let connections = state.withLock { state -> [Int32] in
            guard !state.stopped else { return [] }
            state.stopped = true
            return state.connections
        }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for connection in connections { shutdown(connection, Int32(SHUT_RDWR)) }
    }

    deinit { stop() }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            let open = state.withLock { state -> Bool in
                if !state.stopped { state.connections.append(connection) }
                return !state.stopped
            }
            guard open else { close(connection); return }
            let thread = Thread { [self] in serve(connection) }
            thread.start()
        }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        guard readRequest(connection) else { return }
        state.withLock { $0.requests += 1 }
        switch behaviour {
        case .silent:
            // Holds the connection until the client or `stop` closes it.
            var byte: UInt8 = 0
            while recv(connection, &byte, 1, 0) > 0 {}
        case .redirect(let location):
            _ = write(connection, Array("HTTP/1.1 307 Temporary Redirect\r\nLocation: \(location)\r\nContent-Length: 0\r\n\r\n".utf8))
        case .endless(let status):
            let head = "HTTP/1.1 \(status) Whatever\r\nContent-Type: text/plain\r\nContent-Length: \(Self.bodyBytes)\r\n\r\n"
            guard write(connection, Array(head.utf8)) else { return }
            var chunk = [UInt8](repeating: 0, count: 64 << 10)
            for index in chunk.indices { chunk[index] = UInt8(ascii: "a") + UInt8(index % 26) }
            var sent = 0
            while sent < Self.bodyBytes, write(connection, chunk) {
                sent += chunk.count
                state.withLock { $0.bytesSent += chunk.count }
            }
        }
    }

    /// Reads the head and a `Content-Length` body; whether it all arrived.
    private func readRequest(_ connection: Int32) -> Bool {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        let separator: [UInt8] = [13, 10, 13, 10]
        while true {
            if let end = received.indices.first(where: { received[$0...].starts(with: separator) }) {
                let head = String(decoding: received[..<end], as: UTF8.self).lowercased()
                let length = head.components(separatedBy: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                if received.count >= end + 4 + length { return true }
            }
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { return false }
            received += buffer[0..<count]
        }
    }

    private func write(_ connection: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }
}
