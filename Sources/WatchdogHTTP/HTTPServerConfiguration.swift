/// How the HTTP server listens and what it tolerates from clients.
public struct HTTPServerConfiguration: Sendable {
    public var address: ListenAddress
    /// libmicrohttpd's internal thread pool (epoll); handlers run on these threads.
    public var threads: Int = 2
    /// Connections open at once; more are refused by libmicrohttpd.
    public var connectionLimit: Int = 4096
    /// Connections open at once from one IP address.
    public var perAddressConnectionLimit: Int = 256
    /// An idle connection is closed after this many seconds.
    public var connectionTimeoutSeconds: Int = 30
    /// A request's headers must be complete this many seconds after the connection opened or
    /// its previous request completed; while more than three quarters of `connectionLimit` are
    /// open, one second (see `ConnectionDeadlines`).
    public var headerTimeoutSeconds: Int = 10
    /// Memory libmicrohttpd may use per connection for headers and buffers. It clears this
    /// pool between requests on a keep-alive connection, so larger costs every request
    /// (measured: 64 KiB spent ~5 % of a config-fetch load in memset), and every open
    /// connection holds it: 16 KiB (libmicrohttpd's default is 32) is 4 MiB less at 256
    /// connections, with the same reports/s (docs/performance.md, "Memory"). A request's
    /// headers must fit in it: past about 15 KiB libmicrohttpd answers 431 (or closes).
    public var connectionMemoryLimit: Int = 16 * 1024
    /// Largest body accepted as sent (checked from `Content-Length` and while streaming).
    public var maxBodyBytes: Int = 1 << 20
    /// Largest body accepted after `Content-Encoding: gzip` is undone.
    public var maxDecodedBodyBytes: Int = 1 << 20
    /// Memory all bodies being received may hold together, reserved whole per request from its
    /// `Content-Length` (`maxBodyBytes` when chunked) before a byte is read and held until its
    /// response is sent. A request that does not fit waits, its connection suspended and its
    /// body left in the kernel's socket buffer, until earlier requests complete (`BodyBudget`).
    /// A reservation is declared, not received: a client trickling bodies holds its share
    /// without sending it, so the total is 16 shares, not the benchmark's need (one client's
    /// share binds there), and fewer than 16 addresses cannot stop everyone else's ingest.
    public var maxBufferedBodyBytes: Int = 32 << 20
    /// What one client (the `budgetKey` of `admit`) may hold of `maxBufferedBodyBytes`; its
    /// requests past it wait while other clients' pass them, so one address that never
    /// finishes its bodies holds this much and no more.
    public var maxBufferedBodyBytesPerClient: Int = 2 << 20
    /// Seconds a request may wait for `maxBufferedBodyBytes`; then it is answered 503
    /// (`HTTPLayerError.bodyMemoryExhausted`) and its connection closed.
    public var maxBodyWaitSeconds: Int = 10
    /// Once its memory is granted, a body must be complete within this many seconds plus its
    /// reserved bytes at `minBodyBytesPerSecond`; past that its connection is closed and the
    /// memory given back (`BodyDeadlines`). libmicrohttpd's own timeout restarts with every
    /// byte, so without it a client trickling its body kept its reservation for ever. 10 s + 1 MiB
    /// at 16 KiB/s: the largest body may take 74 s, a 100 KiB gzipped batch 16 s.
    public var bodyDeadlineSeconds: Int = 10
    /// The slowest upload a body's deadline allows for (see `bodyDeadlineSeconds`): 16 KiB/s,
    /// 128 kbit/s, below a poor 3G link.
    public var minBodyBytesPerSecond: Int = 16 << 10
    /// Called from the deadline timer with the client (its budget key) whose connection was
    /// closed for a body past its deadline, for metrics; the drop is also logged.
    public var bodyDeadlineMissed: (@Sendable (String) -> Void)?
    /// Called from the deadline timer for each connection the header deadline closed, with why
    /// (for metrics: idle kept-alive connections are closed this way all the time, so no log).
    public var connectionShed: (@Sendable (ConnectionShedReason) -> Void)?
    /// Decides on a request that announces a body (`Content-Length` > 0 or chunked) from its
    /// headers, before any body byte is buffered: route and authenticate it, and name the client
    /// its bytes are counted for. By default every such request is received, counted for its
    /// address.
    public var admit: @Sendable (HTTPRequestHead) -> HTTPAdmission = { .accept(budgetKey: $0.clientAddress) }
    /// A hot path: asked for every `GET` without a body as soon as its headers are in, before
    /// any header or argument is copied. A response it gives is the answer (queued when
    /// libmicrohttpd asks for it, like any other); `nil` sends the request the ordinary way to
    /// `handler`. It must give exactly what the handler would.
    public var answerFromHeaders: (@Sendable (HTTPRequestPeek) -> PreparedResponse?)?
    /// Turns a failure of the HTTP layer into the application's error response.
    public var renderError: @Sendable (HTTPLayerError) -> HTTPResponse

    public init(address: ListenAddress, renderError: @escaping @Sendable (HTTPLayerError) -> HTTPResponse) {
        self.address = address
        self.renderError = renderError
    }
}
