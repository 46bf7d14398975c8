#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IP address and port to listen on: `127.0.0.1:8080`, `0.0.0.0:8080`, `[::1]:8080`.
public struct ListenAddress: Sendable, CustomStringConvertible {
    public var host: String
    public var port: UInt16
    public var isIPv6: Bool

    /// Parses `HOST:PORT` (IPv6 hosts in brackets). Host names are not resolved.
    public init?(_ text: String) {
        var hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portPart = rest.dropFirst()
            isIPv6 = true
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            isIPv6 = false
        }
        if hostPart == "localhost" { hostPart = isIPv6 ? "::1" : "127.0.0.1" }
        guard let port = UInt16(portPart) else { return nil }
        host = String(hostPart)
        self.port = port
        guard (try? withSocketAddress({ _ in () })) != nil else { return nil }
    }

    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    struct InvalidAddress: Error {}

    /// Calls `body` with a `sockaddr` for this address.
    func withSocketAddress<T>(_ body: (UnsafePointer<sockaddr>) throws -> T) throws -> T {
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else { throw InvalidAddress() }
            return try withUnsafePointer(to: &address) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body)
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw InvalidAddress() }
        return try withUnsafePointer(to: &address) {
            try $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body)
        }
    }
}
