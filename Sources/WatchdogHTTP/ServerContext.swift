import Logging
import Locking
import Synchronization

/// Everything the C callbacks need, passed to libmicrohttpd as an unmanaged pointer. Only
/// `let`s and atomics: libmicrohttpd calls in from several threads at once.
final class ServerContext: Sendable {
    let configuration: HTTPServerConfiguration
    let handler: @Sendable (HTTPRequest, HTTPResponder) -> Void
    let logger: Logger
    /// Requests begun and not yet completed, including suspended ones.
    let requestsInFlight = Atomic<Int>(0)
    /// Set when shutdown begins: new requests get 503, responses close their connection.
    let draining = Atomic<Bool>(false)
    /// Body bytes reserved by requests in flight, in all and per client, and the requests
    /// waiting for their reservation.
    let bodyBudget: BodyBudget
    /// Connections waiting for a request's headers, cut off past the deadline.
    let deadlines: ConnectionDeadlines
    /// Connections whose granted body must arrive by a deadline, cut off past it.
    let bodyDeadlines: BodyDeadlines
    /// Sweeps `deadlines`, `bodyDeadlines` and the requests waiting in `bodyBudget` too long.
    let timer: SweepTimer
    /// Responders whose connection is suspended, so shutdown can answer them all before
    /// `MHD_stop_daemon` (which aborts the process if any connection is still suspended).
    let suspended = SuspendedConnections()

    init(configuration: HTTPServerConfiguration, handler: @escaping @Sendable (HTTPRequest, HTTPResponder) -> Void, logger: Logger) {
        self.configuration = configuration
        let bodyBudget = BodyBudget(total: configuration.maxBufferedBodyBytes, perClient: configuration.maxBufferedBodyBytesPerClient,
                                    maxWaitSeconds: Double(configuration.maxBodyWaitSeconds))
        let deadlines = ConnectionDeadlines(headerSeconds: Double(configuration.headerTimeoutSeconds),
                                            pressureAbove: configuration.connectionLimit * 3 / 4)
        let bodyDeadlines = BodyDeadlines(baseSeconds: Double(configuration.bodyDeadlineSeconds),
                                          minBytesPerSecond: Double(configuration.minBodyBytesPerSecond))
        self.bodyBudget = bodyBudget
        self.deadlines = deadlines
        self.bodyDeadlines = bodyDeadlines
        let bodyDeadlineMissed = configuration.bodyDeadlineMissed, connectionShed = configuration.connectionShed
        timer = SweepTimer { now in
            for reason in deadlines.sweep(now: now) { connectionShed?(reason) }
            for missed in bodyDeadlines.sweep(now: now) {
                logger.warning("body deadline: closed a connection from \(missed.client) whose \(missed.bytes)-byte body was not in after \(Int(missed.seconds.rounded(.up))) s")
                bodyDeadlineMissed?(missed.client)
            }
            bodyBudget.expire(now: now)
        }
        self.handler = handler
        self.logger = logger
    }
}

/// The set of responders waiting with a suspended connection.
final class SuspendedConnections: Sendable {
    private let responders = Locked<[ObjectIdentifier: HTTPResponder]>([:])

    func insert(_ responder: HTTPResponder) {
        responders.withLock { $0[ObjectIdentifier(responder)] = responder }
    }

    func remove(_ responder: HTTPResponder) {
        _ = responders.withLock { $0.removeValue(forKey: ObjectIdentifier(responder)) }
    }

    var all: [HTTPResponder] { responders.withLock { Array($0.values) } }
}
