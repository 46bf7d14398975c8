import Foundation
import Logging
import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// The watchdogd service: the HTTP server, the store, the ingest writer and the config cache,
/// wired together.
///
/// ```swift
/// let server = try WatchdogServer(settings: settings, store: store, logger: logger)
/// print(server.port)
/// server.shutdown()   // drains requests, commits queued batches
/// ```
public final class WatchdogServer: Sendable {
    private let http: HTTPServer
    private let queue: IngestQueue
    private let store: any TelemetryStore
    private let logger: Logger
    private let settings: ServerSettings
    private let authenticator: Authenticator
    private let retention: RetentionJob?

    /// The bound port.
    public var port: UInt16 { http.port }

    public init(settings: ServerSettings, store: any TelemetryStore, logger: Logger, clock: @escaping @Sendable () -> Int64 = WatchdogServer.systemClock) throws {
        let metrics = ServerMetrics()
        let queue = IngestQueue(store: store, logger: logger, capacity: settings.ingestQueueCapacity) { items in
            metrics.commitItems.record(Double(items))
        }
        let authenticator = Authenticator(store: store, clock: clock,
                                          failures: FailedAuthGuard(perSecond: settings.failedAuthPerAddress, metrics: metrics),
                                          trustedProxies: settings.trustedProxies)
        let config = try ConfigService(store: store, clock: clock)
        let lookup = ReleaseLookup(store: store)
        let router = Router(
            authenticator: authenticator,
            ingest: IngestRoutes(queue: queue, clock: clock, afterTestCrashes: { [budget = config.budget] in budget.record($0, day: $1) },
                                 limits: IngestLimits(perKey: RateLimiter(rate: settings.ingestRatePerKey, burst: settings.ingestBurstPerKey),
                                                      perAddress: RateLimiter(rate: settings.ingestRatePerAddress, burst: settings.ingestBurstPerAddress),
                                                      metrics: metrics),
                                 metrics: metrics, trustedProxies: settings.trustedProxies),
            reads: ReadRoutes(store: store, lookup: lookup, config: config, cacheControl: "private, max-age=\(settings.configMaxAgeSeconds)"),
            admin: AdminRoutes(store: store, config: config, authenticator: authenticator, clock: clock),
            compare: CompareRoutes(lookup: lookup, config: config),
            issues: IssueRoutes(lookup: lookup),
            series: SeriesRoutes(lookup: lookup, clock: clock),
            drillDown: ReportRoutes(lookup: lookup),
            store: store,
            queue: queue,
            resources: StaticResources(directory: settings.resourcesDirectory, chartDirectory: settings.chartDirectory),
            auth: AuthRoutes(authenticator: authenticator, store: store),
            metrics: metrics,
            metricsAccess: MetricsAccess(token: settings.metricsToken, trustedProxies: settings.trustedProxies),
            logger: logger
        )
        var configuration = HTTPServerConfiguration(address: settings.listen) { APIError.from($0).response }
        configuration.threads = settings.httpThreads
        configuration.connectionLimit = settings.connectionLimit
        configuration.perAddressConnectionLimit = settings.perAddressConnectionLimit
        configuration.connectionTimeoutSeconds = settings.connectionTimeoutSeconds
        configuration.headerTimeoutSeconds = settings.headerTimeoutSeconds
        configuration.maxBodyBytes = Limits.bodyBytes
        configuration.maxDecodedBodyBytes = Limits.bodyBytes
        configuration.admit = { router.admit($0) }
        do {
            http = try HTTPServer(configuration: configuration, logger: logger) { request, responder in
                router.handle(request, responder: responder)
            }
        } catch {
            queue.stop()
            throw error
        }
        self.queue = queue
        self.authenticator = authenticator
        retention = RetentionJob(store: store, retentionDays: settings.retentionDays, intervalSeconds: settings.retentionIntervalSeconds,
                                 clock: clock, logger: logger)
        self.store = store
        self.logger = logger
        self.settings = settings
    }

    /// A one-time dashboard sign-in link (`/login?code=…`, valid 24 h) for a viewer or admin credential.
    public func signInLink(credentialID: String) throws -> String {
        try authenticator.sessions.link(for: credentialID).path
    }

    /// Stops accepting, answers requests in flight, commits every queued batch, then frees the
    /// HTTP server. The writer is stopped before libmicrohttpd, because the requests it still
    /// has to answer hold suspended connections.
    public func shutdown() {
        retention?.stop()
        http.stopAccepting()
        http.waitForRequests(upTo: settings.drainSeconds)
        queue.stop()
        http.waitForRequests(upTo: 5)
        http.stop()
        if let sqlite = store as? SQLiteStore {
            do { try sqlite.checkpoint() } catch { logger.warning("final WAL checkpoint failed: \(error)") }
        }
    }

    /// Milliseconds since the epoch, from the system clock.
    public static let systemClock: @Sendable () -> Int64 = {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}
