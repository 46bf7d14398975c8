import Dispatch
import Logging
import WatchdogHTTP
import WatchdogStore
import WatchdogWire
import X509

/// The watchdogd service without its transport: the route table over the store, the ingest
/// writer and the config cache. `WatchdogServer` serves it over HTTP; `WatchdogTesting` calls
/// `respond(to:)` in memory.
///
/// ```swift
/// let app = try WatchdogApplication(settings: settings, store: store, logger: logger)
/// app.respond(to: HTTPRequest(method: "GET", path: "/healthz")).whenReady { print($0.status) }
/// app.stop()   // commits queued batches
/// ```
public final class WatchdogApplication: Sendable {
    let router: Router
    /// `GET /v1/config` from the headers alone, for the HTTP layer's `answerFromHeaders`.
    let configFastPath: ConfigFastPath
    /// The releases and their per-release caches, shared by the stats routes and the alert rules.
    let lookup: ReleaseLookup
    let queue: IngestQueue
    let authenticator: Authenticator
    let alerts: AlertService
    let rollouts: RolloutService
    /// Refused attestations and uploads, flushed to the store once a minute.
    let refusals: RefusalCounter
    /// What `GET /metrics` shows; the HTTP layer adds its body-deadline drops.
    let metrics: ServerMetrics
    public let store: any TelemetryStore
    /// Watches a shared store for config changes made on other nodes.
    private let configWatch: (any StoreWatch)?
    /// The threads requests run on when the store is across the network (`RequestOffload`).
    private let offload: RequestOffload?
    /// Requests answered at once on PostgreSQL, each on a thread of `offload`'s.
    static let offloadWidth = 8
    /// The periodic re-read of every config behind the change notifications.
    static let configReloadSeconds = 10.0

    public convenience init(settings: ServerSettings, store: any TelemetryStore, logger: Logger,
                            clock: @escaping @Sendable () -> Int64 = WatchdogServer.systemClock) throws {
        try self.init(settings: settings, store: store, logger: logger, clock: clock, attestationRoots: [AppAttestRoot.pem])
    }

    /// - Parameter attestationRoots: the CA (PEM) an App Attest chain must end at — Apple's,
    ///   except for tests, which make their own (`WatchdogTesting`; no config file or flag
    ///   reaches it).
    @_spi(Testing)
    public init(settings: ServerSettings, store: any TelemetryStore, logger: Logger, clock: @escaping @Sendable () -> Int64,
                attestationRoots: [String]) throws {
        // Checked before any thread starts: a wrong OpenID setting stops `serve` at once.
        let oidcConfiguration = try OIDCConfiguration.from(settings)
        let roots: [Certificate]
        do { roots = try attestationRoots.map { try Certificate(pemEncoded: $0) } } catch { throw SettingsError("an attestation root is not a PEM certificate: \(error)") }
        let metrics = ServerMetrics()
        metrics.outage.watch(store, logger: logger)
        let admission = AdmissionService(store: store)
        let refusals = RefusalCounter(store: store, clock: clock, logger: logger, background: settings.alertsInBackground)
        let attestation = AttestationService(store: store, clock: clock, roots: roots, refusals: refusals)
        let lookup = ReleaseLookup(store: store, admission: admission)
        let alerts = AlertService(store: store, lookup: lookup, settings: settings, clock: clock, logger: logger)
        let queue = IngestQueue(store: store, logger: logger, capacity: settings.ingestQueueCapacity) { items in
            metrics.commitItems.record(Double(items))
            // Only notes the time: rules are evaluated on the alert worker's thread.
            alerts.commitsHappened()
        }
        let authenticator = Authenticator(store: store, clock: clock,
                                          failures: FailedAuthGuard(perSecond: settings.failedAuthPerAddress, metrics: metrics),
                                          trustedProxies: settings.trustedProxies)
        let config: ConfigService
        do { config = try ConfigService(store: store, clock: clock, cacheControl: "private, max-age=\(settings.configMaxAgeSeconds)") } catch {
            queue.stop()
            alerts.stop()
            throw error
        }
        let ingest = IngestRoutes(queue: queue, clock: clock, afterTestCrashes: { [budget = config.budget] in budget.record($0, day: $1) },
                                  limits: IngestLimits(perKey: RateLimiter(rate: settings.ingestRatePerKey, burst: settings.ingestBurstPerKey),
                                                       perAddress: RateLimiter(rate: settings.ingestRatePerAddress, burst: settings.ingestBurstPerAddress),
                                                       metrics: metrics),
                                  metrics: metrics, trustedProxies: settings.trustedProxies, admission: admission, attestation: attestation,
                                  cardinality: CardinalityRegistry(store: store))
        let rollouts = RolloutService(store: store, config: config, lookup: lookup, alerts: alerts, settings: settings, clock: clock, logger: logger)
        let audit = AuditLog(store: store, clock: clock, logger: logger)
        let oidc = oidcConfiguration.map { configuration in
            OIDCSignIn(provider: OIDCProvider(configuration: configuration, clock: clock), authenticator: authenticator, store: store, audit: audit,
                       cookieSecure: settings.cookieSecure, trustedProxies: settings.trustedProxies, clock: clock)
        }
        let services = Services(settings: settings, store: store, queue: queue, config: config, authenticator: authenticator,
                                ingest: ingest, metrics: metrics, alerts: alerts, rollouts: rollouts, lookup: lookup, admission: admission,
                                attestation: attestation, clock: clock, audit: audit, oidc: oidc,
                                fourEyes: FourEyes(store: store, config: config, clock: clock, audit: audit))
        // On PostgreSQL no request that may wait for the database runs on an HTTP worker.
        offload = store.reachability == nil ? nil : RequestOffload(width: Self.offloadWidth)
        let routes = RouteMatcher(Routes.table(services))
        services.fourEyes.routes = routes
        router = Router(routes: routes, authenticator: authenticator, metrics: metrics,
                        trustedProxies: settings.trustedProxies, logger: logger, audit: services.audit, offload: offload, fourEyes: services.fourEyes)
        configFastPath = ConfigFastPath(authenticator: authenticator, config: config, metrics: metrics)
        // Several nodes on one store: a config saved on another node is served here within
        // about a second (its notification), or within `configReloadSeconds` if one was missed.
        configWatch = (store as? any SharedTelemetryStore)?.watchConfigChanges(fallbackSeconds: Self.configReloadSeconds) { [config, logger] app in
            do {
                let changed = try config.reloadFromStore(app: app)
                if !changed.isEmpty { logger.info("config changed on another node", metadata: ["apps": "\(changed.joined(separator: ","))"]) }
            } catch {
                logger.warning("config reload failed: \(error)")
            }
        }
        self.lookup = lookup
        self.queue = queue
        self.authenticator = authenticator
        self.store = store
        self.alerts = alerts
        self.rollouts = rollouts
        self.refusals = refusals
        self.metrics = metrics
    }

    /// The views the dashboard opens an app with, answered once per app by `warmUp`.
    static let warmViews = ["releases", "compare", "issues", "timeseries", "keyboard", "reports"]

    /// What `warmUp` did.
    struct WarmUp: Sendable, CustomStringConvertible {
        var apps = 0
        var releases = 0
        /// Every release and view of every app is warm; otherwise the time limit came first.
        var complete = true
        var milliseconds = 0.0

        var description: String {
            "\(releases) releases of \(apps) apps and their dashboard views in \(Int(milliseconds.rounded())) ms\(complete ? "" : ", stopped at the time limit: the rest are filled by their first request")"
        }
    }

    /// Before the server listens, app by app: fills the per-release caches (install
    /// concentration, design-effect sums) of every release, then answers the app's dashboard
    /// views once, so the first request after a start finds SQLite's pages and every cache as
    /// the next one would. Stops after `nanoseconds`: what is left is computed by its first
    /// request, as before.
    func warmUp(for nanoseconds: UInt64) -> WarmUp {
        let started = DispatchTime.now().uptimeNanoseconds
        let deadline = started + nanoseconds
        var done = WarmUp()
        apps: for app in (try? store.apps()) ?? [] {
            let releases = lookup.warm(app: app.app, until: deadline)
            done.apps += 1
            done.releases += releases.releases
            for view in Self.warmViews {
                guard releases.complete, DispatchTime.now().uptimeNanoseconds < deadline else {
                    done.complete = false
                    break apps
                }
                router.warmUp(HTTPRequest(method: "GET", path: "/v1/apps/\(app.app)/\(view)"))
            }
        }
        done.milliseconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
        return done
    }

    /// The answer to a request; errors are already rendered as responses.
    public func respond(to request: HTTPRequest) -> Response {
        router.respond(to: request)
    }

    /// Every routed path template and its methods, in table order.
    public var endpoints: [(path: String, methods: [String])] { router.routes.endpoints }

    /// A one-time dashboard sign-in link (`/login?code=…`, valid 24 h) for a viewer or admin credential.
    public func signInLink(credentialID: String) throws -> String {
        try authenticator.sessions.link(for: credentialID).path
    }

    /// Evaluates every app's alert rules now (the worker does it after commits); how many
    /// alerts were stored. For tests that run the worker's passes by hand.
    @discardableResult
    public func evaluateAlerts() throws -> Int {
        try alerts.evaluate()
    }

    /// Queues the last complete week's digest for every digest hook that has not had it (the
    /// alerts' thread does it every minute); how many were queued. For tests.
    @discardableResult
    public func queueDigests() throws -> Int {
        try alerts.digests.queueDue()
    }

    /// One pass of the rollout guard now (its thread does it every `rolloutIntervalSeconds`);
    /// how many steps it took. For tests that run the guard's passes by hand.
    @discardableResult
    public func evaluateRollouts() throws -> Int {
        try rollouts.evaluate()
    }

    /// Adds this node's refusal counts to the store's now (its thread does it every minute).
    /// For tests.
    public func flushRefusals() throws {
        try refusals.flush()
    }

    /// Sends the webhook deliveries due now (by the application's clock); how many were tried.
    @discardableResult
    public func deliverAlerts() throws -> Int {
        try alerts.deliverer.deliverDue().attempted
    }

    /// Commits every queued batch and stops the ingest writer (later posts get 503), then the
    /// alert worker (a delivery in flight stays pending).
    public func stop() {
        offload?.stop()
        configWatch?.stop()
        queue.stop()
        rollouts.stop()
        refusals.stop()
        alerts.stop()
    }
}
