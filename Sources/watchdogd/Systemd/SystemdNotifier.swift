import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// systemd's notification protocol (sd_notify(3)) without libsystemd: one datagram of
/// newline-separated `NAME=value` fields to the AF_UNIX socket named by `$NOTIFY_SOCKET`, a
/// file system path or, starting with `@`, an abstract socket. Without `$NOTIFY_SOCKET` (not
/// started by systemd as `Type=notify`) every call does nothing.
struct SystemdNotifier: Sendable {
    /// The socket's address as systemd gave it, or `nil`.
    let socket: String?

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        socket = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    var isEnabled: Bool { socket != nil }

    /// Why a notification was not delivered.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Sends `fields` (e.g. `READY=1`, `STATUS=…`) in one datagram.
    func notify(_ fields: [String]) throws(Failure) {
        guard let socket else { return }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socket.utf8)
        // An abstract socket's name starts with a NUL byte and is not NUL-terminated: its
        // length is exactly what the address length says.
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity, path.first == 0 || path.first == UInt8(ascii: "/") else {
            throw Failure(description: "NOTIFY_SOCKET is neither an absolute path nor @abstract: \(socket)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + path.count)

        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        let message = Array(fields.joined(separator: "\n").utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                message.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), address, length) }
            }
        }
        guard sent == message.count else {
            throw Failure(description: "sending to NOTIFY_SOCKET \(socket): \(String(cString: strerror(errno)))")
        }
    }
}
