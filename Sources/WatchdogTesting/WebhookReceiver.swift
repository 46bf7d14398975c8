import Crypto
import Foundation
import Locking
import Logging
import WatchdogHTTP
import WatchdogServer

/// A webhook receiver on loopback for tests: a real HTTP server (the project's libmicrohttpd
/// layer) that records every request and answers with the status the test chose. "Down" is
/// either a non-2xx answer (`answer(503)`) or nothing listening (`stop()`, then a new receiver
/// on the same `port`).
///
/// ```swift
/// let receiver = try WebhookReceiver()
/// // POST …/alerts/hooks {"url": receiver.url}
/// #expect(receiver.waitForRequests(1))
/// #expect(receiver.received[0].isSigned(with: secret))
/// ```
public final class WebhookReceiver: Sendable {
    /// One request as it arrived.
    public struct Received: Sendable {
        public var path: String
        /// Names lowercased.
        public var headers: [String: String]
        public var body: [UInt8]
        /// The status it was answered with.
        public var status: Int

        /// The body as a JSON object.
        public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }

        /// `Watchdog-Delivery`: the alert's idempotency key.
        public var deliveryID: String? { headers["watchdog-delivery"] }

        /// Whether `Watchdog-Signature` is `sha256=` and the hex HMAC-SHA256 of
        /// `<Watchdog-Timestamp>.<body>` keyed with `secret`, as docs/api.md tells receivers to
        /// check it — computed here from that description, not with the server's own code.
        public func isSigned(with secret: String) -> Bool {
            guard let signature = headers["watchdog-signature"], let timestamp = headers["watchdog-timestamp"] else { return false }
            let code = HMAC<SHA256>.authenticationCode(for: Array("\(timestamp).".utf8) + body, using: SymmetricKey(data: Array(secret.utf8)))
            return signature == "sha256=" + code.map { String(format: "%02x", $0) }.joined()
        }
    }

    private struct State {
        var received: [Received] = []
        var status: Int
        var stopped = false
    }

    private let state: Locked<State>
    private let server: HTTPServer
    public let port: UInt16

    /// Listens on `port` (0: a free one) and answers every request with `status`.
    public init(port: UInt16 = 0, status: Int = 200) throws {
        let state = Locked(State(status: status))
        let configuration = HTTPServerConfiguration(address: ListenAddress("127.0.0.1:\(port)")!) { _ in HTTPResponse(status: 500) }
        server = try HTTPServer(configuration: configuration, logger: Logger(label: "webhook-receiver")) { request, responder in
            var headers: [String: String] = [:]
            for (name, value) in request.headers.fields { headers[name] = value }
            let status = state.withLock { state in
                state.received.append(Received(path: request.path, headers: headers, body: request.body, status: state.status))
                return state.status
            }
            responder.respond(HTTPResponse(status: status, headers: [("Content-Type", "text/plain")], body: Array((status < 300 ? "ok" : "receiver down").utf8)))
        }
        self.state = state
        self.port = server.port
    }

    /// The URL to register as a hook.
    public var url: String { "http://127.0.0.1:\(port)/hook" }

    /// Every request so far, in arrival order.
    public var received: [Received] { state.withLock { $0.received } }

    /// Answers later requests with `status`.
    public func answer(_ status: Int) {
        state.withLock { $0.status = status }
    }

    /// Waits (bounded by `seconds`, a limit on failure, not a measure) until `count` requests
    /// have arrived; whether they did.
    public func waitForRequests(_ count: Int, seconds: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while received.count < count {
            guard Date() < deadline else { return false }
            usleep(10_000)
        }
        return true
    }

    /// Stops listening: connections to `port` are refused until a new receiver takes it.
    public func stop() {
        guard state.withLock({ state in defer { state.stopped = true }; return !state.stopped }) else { return }
        server.shutdown(drainSeconds: 1)
    }

    deinit { stop() }
}
