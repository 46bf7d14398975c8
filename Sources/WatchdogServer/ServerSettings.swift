import WatchdogHTTP
import WatchdogStore

/// How `watchdogd serve` runs.
public struct ServerSettings: Sendable {
    public var listen: ListenAddress
    public var dataDirectory: String
    public var synchronous: SQLiteStore.Synchronous = .full
    public var httpThreads: Int = 2
    public var connectionLimit: Int = 4096
    public var perAddressConnectionLimit: Int = 256
    public var connectionTimeoutSeconds: Int = 30
    /// Seconds a connection may take to send a request's headers (from opening, or from its
    /// previous response); one second while more than 3/4 of the connection limit is open.
    public var headerTimeoutSeconds: Int = 10
    /// Items the ingest writer may have waiting before requests get 503.
    public var ingestQueueCapacity: Int = 100_000
    /// Ingest requests a second per ingest key (a whole fleet shares one), bursts up to
    /// `ingestBurstPerKey`; 0: no limit.
    public var ingestRatePerKey: Double = 1000
    public var ingestBurstPerKey: Double = 2000
    /// Ingest requests a second per client address (set 0 behind a reverse proxy, where every
    /// request comes from the proxy), bursts up to `ingestBurstPerAddress`.
    public var ingestRatePerAddress: Double = 100
    public var ingestBurstPerAddress: Double = 500
    /// Lookups of unknown credentials a second per client address (bursts of 10×); past it
    /// new unknown tokens and cookies get 429 before any hashing or store read; 0: no limit.
    public var failedAuthPerAddress: Double = 10
    /// Addresses of reverse proxies whose `X-Forwarded-For` names the real client (for the
    /// per-address rate limit).
    public var trustedProxies: Set<String> = []
    /// Bearer token for `GET /metrics`; without one, only loopback clients may scrape.
    public var metricsToken: String?
    /// Reports of one fingerprint one session may send before the rest count as flooded; 0: no cap.
    public var floodCap: Int = SQLiteStore.defaultFloodCap
    /// Raw reports and session starts older than this are pruned (roll-ups stay); 0 keeps all.
    public var retentionDays: Int = 90
    /// How often the retention job looks for old rows.
    public var retentionIntervalSeconds: Double = 3600
    /// How long shutdown waits for requests in flight.
    public var drainSeconds: Double = 10
    /// `Cache-Control: max-age` of `GET /v1/config`: how long a fleet may reuse a config
    /// before asking again (and so how fast a switch reaches everyone).
    public var configMaxAgeSeconds: Int = 60
    /// Where `openapi.yaml` and the dashboard are read from.
    public var resourcesDirectory: String?
    /// Debian's Chart.js (`libjs-chart.js`), served under `/assets/chart.js/`.
    public var chartDirectory: String = "/usr/share/javascript/chart.js"

    public init(listen: ListenAddress, dataDirectory: String) {
        self.listen = listen
        self.dataDirectory = dataDirectory
    }
}
