import CMicroHTTPD
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An HTTP/1.1 server on libmicrohttpd: epoll with an internal thread pool, keep-alive, body
/// limits, suspended connections for answers that come later.
///
/// ```swift
/// let server = try HTTPServer(configuration: configuration, logger: logger) { request, responder in
///     responder.respond(HTTPResponse(status: 200, body: Array("ok".utf8)))
/// }
/// print(server.port)
/// server.shutdown(drainSeconds: 10)
/// ```
public final class HTTPServer: Sendable {
    /// libmicrohttpd could not start, e.g. the port is taken.
    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    private let daemon: DaemonHandle
    private let contextPointer: ContextPointer
    private let context: ServerContext
    /// The port actually bound (useful with port 0).
    public let port: UInt16

    public init(
        configuration: HTTPServerConfiguration, logger: Logger,
        handler: @escaping @Sendable (HTTPRequest, HTTPResponder) -> Void
    ) throws {
        let context = ServerContext(configuration: configuration, handler: handler, logger: logger)
        let contextPointer = Unmanaged.passRetained(context).toOpaque()
        var flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_ERROR_LOG.rawValue
        if configuration.address.isIPv6 { flags |= MHD_USE_IPv6.rawValue }
        let started: OpaquePointer? = try configuration.address.withSocketAddress { address in
            var options = watchdog_daemon_options(
                flags: flags,
                address: address,
                accept_policy: Callbacks.acceptPolicy,
                accept_policy_context: contextPointer,
                thread_pool_size: UInt32(configuration.threads),
                connection_limit: UInt32(configuration.connectionLimit),
                per_ip_connection_limit: UInt32(configuration.perAddressConnectionLimit),
                connection_timeout_s: UInt32(configuration.connectionTimeoutSeconds),
                connection_memory_limit: configuration.connectionMemoryLimit,
                handler: Callbacks.access,
                handler_context: contextPointer,
                completed: Callbacks.completed,
                completed_context: contextPointer,
                logger: Callbacks.log,
                logger_context: contextPointer,
                notify_connection: Callbacks.connectionEvent,
                notify_connection_context: contextPointer
            )
            return watchdog_start_daemon(&options)
        }
        guard let started else {
            Unmanaged<ServerContext>.fromOpaque(contextPointer).release()
            throw StartError(description: "libmicrohttpd could not listen on \(configuration.address) (address in use or not available)")
        }
        self.daemon = DaemonHandle(pointer: started)
        self.contextPointer = ContextPointer(pointer: contextPointer)
        self.context = context
        self.port = watchdog_daemon_bound_port(started)
        context.timer.start()
    }

    /// Requests received and not yet completed.
    public var requestsInFlight: Int { context.requestsInFlight.load(ordering: .relaxed) }

    /// Starts draining: requests already received are still answered, new ones on open
    /// connections get 503, and every response closes its connection. New connections are
    /// closed as soon as they are accepted (the accept policy refuses them), so a TCP-level
    /// health check still sees the port open; `/readyz` is the check to use.
    ///
    /// Not `MHD_quiesce_daemon`: with epoll and internal threads it races the worker threads
    /// removing the listening socket from their epoll sets, and libmicrohttpd 0.9.75 aborts the
    /// process when it loses ("Failed to remove listen FD from epoll set"), seen under SIGTERM
    /// with clients posting. The listening socket stays polled and is closed by `stop`.
    ///
    /// Requests waiting for the body budget (their body not read yet) are resumed and answered
    /// 503 like new ones.
    public func stopAccepting() {
        context.draining.store(true, ordering: .relaxed)
        context.bodyBudget.close()
    }

    /// Waits until no request is in flight or `seconds` pass; returns whether none is left.
    @discardableResult
    public func waitForRequests(upTo seconds: Double) -> Bool {
        let deadline = monotonicSeconds() + seconds
        while requestsInFlight > 0 {
            if monotonicSeconds() >= deadline { return false }
            usleep(2_000)
        }
        return true
    }

    /// Answers every request still waiting with 503, closes all connections and frees the
    /// server. libmicrohttpd aborts the process if `MHD_stop_daemon` finds a suspended
    /// connection, so none is left suspended first: neither a responder's nor one waiting for
    /// the body budget (`stopAccepting` resumes those).
    public func stop() {
        stopAccepting()
        for responder in context.suspended.all {
            responder.respond(context.configuration.renderError(.shuttingDown))
        }
        waitForRequests(upTo: 2)
        context.timer.stop()
        MHD_stop_daemon(daemon.pointer)
        Unmanaged<ServerContext>.fromOpaque(contextPointer.pointer).release()
    }

    /// `stopAccepting`, wait up to `drainSeconds`, `stop`: for servers whose handlers answer
    /// without outside help.
    public func shutdown(drainSeconds: Double) {
        stopAccepting()
        waitForRequests(upTo: drainSeconds)
        stop()
    }
}

/// The retained `ServerContext` libmicrohttpd's callbacks receive; released after the daemon stops.
private struct ContextPointer: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
}

/// The daemon pointer; libmicrohttpd's daemon calls used here are thread-safe.
private struct DaemonHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
