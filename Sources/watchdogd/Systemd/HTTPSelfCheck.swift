import Foundation
import WatchdogHTTP
#if canImport(Glibc)
import Glibc
#endif

/// The HTTP side's proof of life for systemd's watchdog: `GET /healthz` on the daemon's own
/// socket. Any answer — or the server closing the connection at once, as it does past a
/// connection limit — shows the HTTP loop accepting and answering; silence until the deadline,
/// or no listening socket, does not.
struct HTTPSelfCheck: Sendable {
    let host: String
    let port: UInt16
    let isIPv6: Bool

    /// The address to reach a server listening on `listen`: a wildcard address is reached on loopback.
    init(listen: ListenAddress, port: UInt16) {
        isIPv6 = listen.isIPv6
        switch listen.host {
        case "0.0.0.0": host = "127.0.0.1"
        case "::": host = "::1"
        default: host = listen.host
        }
        self.port = port
    }

    /// Whether the server answered within `seconds`.
    func answers(withinSeconds seconds: Double) -> Bool {
        let descriptor = socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        // On Linux SO_SNDTIMEO also bounds connect().
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard connect(descriptor) else { return false }
        let request = Array("GET /healthz HTTP/1.1\r\nHost: \(isIPv6 ? "[\(host)]" : host):\(port)\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
            return errno == ECONNRESET || errno == EPIPE
        }
        var buffer = [UInt8](repeating: 0, count: 64)
        let received = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if received > 0 { return buffer.starts(with: Array("HTTP/1.".utf8)) }
        // 0: closed by the server without an answer; ECONNRESET: the same, abruptly.
        return received == 0 || errno == ECONNRESET
    }

    private func connect(_ descriptor: Int32) -> Bool {
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            return inet_pton(AF_INET6, host, &address.sin6_addr) == 1 && Self.connect(descriptor, to: address)
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        return inet_pton(AF_INET, host, &address.sin_addr) == 1 && Self.connect(descriptor, to: address)
    }

    private static func connect<Address>(_ descriptor: Int32, to address: Address) -> Bool {
        var address = address
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<Address>.size)) == 0 }
        }
    }
}
