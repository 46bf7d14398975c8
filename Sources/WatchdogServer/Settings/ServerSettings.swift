import WatchdogHTTP
import WatchdogStore

/// How `watchdogd serve` runs. Every default is written here, once; `SettingsTable.serve`
/// maps flags, `WATCHDOG_*` variables and settings-file keys onto these fields.
public struct ServerSettings: Sendable {
    public var listen = ListenAddress("127.0.0.1:8080")!
    public var dataDirectory = "./data"
    /// Create the demo app on first run and print sign-in tokens.
    public var demo = false
    /// Mark the dashboard's session cookie `Secure` (behind TLS): the browser then sends it over
    /// HTTPS only.
    public var cookieSecure = false
    public var synchronous: SQLiteStore.Synchronous = .full
    public var httpThreads = HTTPDefaults.configuration.threads
    public var connectionLimit = HTTPDefaults.configuration.connectionLimit
    public var perAddressConnectionLimit = HTTPDefaults.configuration.perAddressConnectionLimit
    public var connectionTimeoutSeconds = HTTPDefaults.configuration.connectionTimeoutSeconds
    /// Seconds a connection may take to send a request's headers (from opening, or from its
    /// previous response); one second while more than 3/4 of the connection limit is open.
    public var headerTimeoutSeconds = HTTPDefaults.configuration.headerTimeoutSeconds
    /// Memory bodies being received may hold in all, MiB; requests past it wait, their body left
    /// unread in the kernel's socket buffer, until earlier ones complete.
    public var bodyMemoryMiB = HTTPDefaults.configuration.maxBufferedBodyBytes >> 20
    /// What one client (an address, or the client a trusted proxy names) may hold of it, MiB.
    public var bodyMemoryPerClientMiB = HTTPDefaults.configuration.maxBufferedBodyBytesPerClient >> 20
    /// Seconds a request may wait for body memory before it gets 503 with `Retry-After`.
    public var bodyWaitSeconds = HTTPDefaults.configuration.maxBodyWaitSeconds
    /// Seconds a body may take once its memory is granted, plus its size at `bodyMinRateKiB`;
    /// past that its connection is closed and the memory given back.
    public var bodyDeadlineSeconds = HTTPDefaults.configuration.bodyDeadlineSeconds
    /// The slowest upload the body deadline allows for, KiB/s.
    public var bodyMinRateKiB = HTTPDefaults.configuration.minBodyBytesPerSecond >> 10
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
    /// Days audit rows are kept (`audit-retention-days`); 0 keeps them forever.
    public var auditRetentionDays: Int = 400
    /// How often the retention job looks for old rows.
    public var retentionIntervalSeconds: Double = 3600
    /// Seconds after a commit before alert rules are evaluated; commits meanwhile join that
    /// evaluation, so under steady ingest rules are evaluated once per delay.
    public var alertDelaySeconds: Int = 10
    /// The first retry of a failed webhook delivery waits this long, each next one twice as long
    /// (at most 30 min apart, for 24 h).
    public var alertRetryBaseSeconds: Double = 10
    /// Hosts webhook deliveries may go to (lowercased); empty: any. A delivery to another host
    /// fails without a connection (an egress allowlist; test runs keep deliveries on loopback).
    public var alertAllowedHosts: Set<String> = []
    /// How long a webhook receiver may take to answer.
    public var alertTimeoutSeconds: Double = 10
    /// The SMTP server `email` hooks send through: `smtp://host:587` (STARTTLS required) or
    /// `smtps://host:465`; unset: e-mail hooks' deliveries fail and are retried.
    public var smtpURL: String?
    /// The `From` address of alert e-mails.
    public var smtpSender: String = "watchdogd@localhost"
    /// A file of two lines, the SMTP user name and password (unset: no login).
    public var smtpCredentialsFile: String?
    /// A CA bundle to trust for the SMTP server instead of the system's (a private CA).
    public var smtpCAFile: String?
    /// Evaluate and deliver alerts on their own thread. `WatchdogTesting` turns it off and runs
    /// passes by hand (`WatchdogApplication.evaluateAlerts`, `deliverAlerts`).
    public var alertsInBackground = true
    /// Seconds between passes of the rollout guard (`RolloutService`), on its own thread.
    public var rolloutIntervalSeconds: Int = 60
    /// TEST ONLY: a file holding milliseconds the daemon's clock runs ahead of the system's,
    /// re-read every 50 ms (`watchdogd serve` honours it only with `WATCHDOG_TEST_HOOKS=1` in
    /// its environment and refuses to start otherwise). Daemon tests move time forward with it.
    public var testClockFile: String?
    /// How long shutdown waits for requests in flight.
    public var drainSeconds: Double = 10
    /// `Cache-Control: max-age` of `GET /v1/config`: how long a fleet may reuse a config
    /// before asking again (and so how fast a switch reaches everyone).
    public var configMaxAgeSeconds: Int = 60
    /// Where `openapi.yaml` and the dashboard are read from.
    public var resourcesDirectory: String?
    /// Debian's Chart.js (`libjs-chart.js`), served under `/assets/chart.js/`.
    public var chartDirectory: String = "/usr/share/javascript/chart.js"

    /// OpenID Connect sign-in for the dashboard (`--oidc-issuer` and its companions); off
    /// while `oidcIssuer` is unset.
    public var oidcIssuer: String?
    public var oidcClientID: String?
    /// A file holding the client secret (never the secret itself on a command line).
    public var oidcClientSecretFile: String?
    /// Who becomes what: `group:NAME=ROLE[:APP+APP]`, `domain:example.com=ROLE[:…]`.
    public var oidcRoles: [OIDCRoleRule] = []
    /// The claim holding the person's groups.
    public var oidcGroupsClaim = "groups"
    /// The sign-in button's words: "Sign in with <name>".
    public var oidcProviderName: String?
    /// The redirect URI registered at the IdP; unset: `http(s)://<Host>/auth/oidc/callback`.
    public var oidcRedirectURI: String?
    /// Scopes asked for besides `openid`.
    public var oidcScopes: [String] = ["email", "profile"]
    /// Seconds between JWKS fetches caused by an unknown `kid` (key rotation).
    public var oidcJWKSRefetchSeconds: Int = 60

    public init() {}

    public init(listen: ListenAddress, dataDirectory: String) {
        self.listen = listen
        self.dataDirectory = dataDirectory
    }
}

/// The HTTP layer's own defaults (`HTTPServerConfiguration`), so they are written once.
private enum HTTPDefaults {
    static let configuration = HTTPServerConfiguration(address: ListenAddress("127.0.0.1:0")!) { _ in HTTPResponse(status: 500) }
}
