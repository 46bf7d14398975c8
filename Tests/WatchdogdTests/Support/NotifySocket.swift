import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// systemd's side of sd_notify(3) for tests: a Unix datagram socket, bound to a file in a
/// temporary directory or to an abstract name, whose address goes into `$NOTIFY_SOCKET`.
final class NotifySocket {
    /// What `$NOTIFY_SOCKET` is set to: the path, or `@name` for an abstract socket.
    let address: String
    private let descriptor: Int32
    private let directory: URL?

    init(abstract: Bool) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw HTTPClientError(description: "socket: \(errno)") }
        var path: [UInt8]
        if abstract {
            address = "@watchdogd-test-\(UUID().uuidString)"
            directory = nil
            path = [0] + Array(address.utf8.dropFirst())
        } else {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            self.directory = directory
            address = directory.appendingPathComponent("notify").path
            path = Array(address.utf8)
        }
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { $0.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + path.count)
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else { throw HTTPClientError(description: "bind \(address): \(errno)") }
    }

    deinit {
        close(descriptor)
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    /// The next datagram, or `nil` if none comes within `seconds`.
    func receive(seconds: Double) -> String? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(seconds * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        return count >= 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : nil
    }

    /// Waits up to `seconds` for a datagram with the field `field` (e.g. `READY=1`); the datagrams before it are dropped.
    func waitFor(_ field: String, seconds: Double) -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let message = receive(seconds: deadline.timeIntervalSinceNow), message.split(separator: "\n").contains(Substring(field)) {
                return message
            }
        }
        return nil
    }

    /// Every datagram that arrives in the next `seconds`.
    func collect(seconds: Double) -> [String] {
        var messages: [String] = []
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let message = receive(seconds: max(deadline.timeIntervalSinceNow, 0.001)) { messages.append(message) }
        }
        return messages
    }
}
