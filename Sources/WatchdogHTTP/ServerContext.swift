import Logging
import Synchronization

/// Everything the C callbacks need, passed to libmicrohttpd as an unmanaged pointer. Only
/// `let`s and atomics: libmicrohttpd calls in from several threads at once.
final class ServerContext: Sendable {
    let configuration: HTTPServerConfiguration
    let handler: @Sendable (HTTPRequest, HTTPResponder) -> Void
    let logger: Logger
    /// Requests begun and not yet completed, including suspended ones.
    let requestsInFlight = Atomic<Int>(0)

    init(configuration: HTTPServerConfiguration, handler: @escaping @Sendable (HTTPRequest, HTTPResponder) -> Void, logger: Logger) {
        self.configuration = configuration
        self.handler = handler
        self.logger = logger
    }
}
