import Foundation
import Testing
import WatchdogHTTP
@testable import watchdogd
#if canImport(Glibc)
import Glibc
#endif

/// The HTTP side of systemd's watchdog: `GET /healthz` on the daemon's own socket.
@Suite struct HTTPSelfCheckTests {
    @Test func aServingDaemonAnswers() throws {
        let daemon = try Daemon()
        let check = HTTPSelfCheck(listen: try #require(ListenAddress("127.0.0.1:0")), port: daemon.port)
        #expect(check.answers(withinSeconds: 10))
    }

    /// A socket the kernel accepts connections for but nobody serves: what a wedged HTTP loop looks like from outside.
    @Test func aListenerThatNeverAnswersDoesNot() throws {
        let (descriptor, port) = try Self.loopbackSocket(listening: true)
        defer { close(descriptor) }
        let check = HTTPSelfCheck(listen: try #require(ListenAddress("0.0.0.0:0")), port: port)
        #expect(!check.answers(withinSeconds: 0.5), "connected, but no answer within the budget")
    }

    @Test func noListenerDoesNot() throws {
        let (descriptor, port) = try Self.loopbackSocket(listening: false)
        close(descriptor)   // the port was free a moment ago and nobody listens on it
        let check = HTTPSelfCheck(listen: try #require(ListenAddress("127.0.0.1:0")), port: port)
        #expect(!check.answers(withinSeconds: 2))
    }

    /// A TCP socket bound to a free loopback port, listening (never accepting) or not.
    static func loopbackSocket(listening: Bool) throws -> (Int32, UInt16) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && (!listening || listen(descriptor, 8) == 0) && getsockname(descriptor, $0, &length) == 0
            }
        }
        try #require(bound, "a loopback socket")
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }
}
