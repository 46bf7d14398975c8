import ArgumentParser
import Dispatch
import Foundation
import Logging
import WatchdogHTTP
import WatchdogServer
import WatchdogStore

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the HTTP server.",
        discussion: "Prints 'listening on http://HOST:PORT' on stdout once it accepts connections (useful with port 0)."
    )

    @OptionGroup var common: CommonOptions

    @Option(help: "Address to listen on, HOST:PORT or [IPv6]:PORT; port 0 picks a free one (env WATCHDOG_LISTEN, default 127.0.0.1:8080).")
    var listen: String?

    @Flag(help: "Create a demo app with two releases of data on first run, and print sign-in tokens (env WATCHDOG_DEMO=1).")
    var demo = false

    @Option(help: "SQLite synchronous mode: full (a 202 survives power loss) or normal (survives a crash of watchdogd) (env WATCHDOG_SYNCHRONOUS, default full).")
    var synchronous: String?

    @Option(help: "HTTP worker threads (env WATCHDOG_HTTP_THREADS, default 2).")
    var httpThreads: Int?

    @Option(help: "Open connections at most (env WATCHDOG_CONNECTION_LIMIT, default 4096).")
    var connectionLimit: Int?

    @Option(help: "Open connections per client IP at most (env WATCHDOG_PER_IP_CONNECTION_LIMIT, default 256).")
    var perIpConnectionLimit: Int?

    @Option(help: "Seconds before an idle connection is closed (env WATCHDOG_CONNECTION_TIMEOUT, default 30).")
    var connectionTimeout: Int?

    @Option(help: "Seconds a connection may take to send a request's headers, from opening or from its previous response; 1 while more than 3/4 of the connection limit is open (env WATCHDOG_HEADER_TIMEOUT, default 10).")
    var headerTimeout: Int?

    @Option(help: "Cache-Control max-age of GET /v1/config, seconds: how long clients reuse a config (env WATCHDOG_CONFIG_MAX_AGE, default 60).")
    var configMaxAge: Int?

    @Option(help: "Ingest requests a second per ingest key; 0: no limit (env WATCHDOG_RATE_PER_KEY, default 1000, bursts of twice that).")
    var ratePerKey: Int?

    @Option(help: "Ingest requests a second per client address; 0 behind a reverse proxy (env WATCHDOG_RATE_PER_ADDRESS, default 100, bursts of 5×).")
    var ratePerAddress: Int?

    @Option(help: "Unknown tokens or session cookies a second per client address before it gets 429 for new ones; 0: no limit (env WATCHDOG_FAILED_AUTH_PER_ADDRESS, default 10, bursts of 10×).")
    var failedAuthPerAddress: Int?

    @Option(help: "Address of a reverse proxy whose X-Forwarded-For names the client, for the per-address rate limit; repeatable (env WATCHDOG_TRUSTED_PROXY, comma-separated).")
    var trustedProxy: [String] = []

    @Option(help: "Bearer token for GET /metrics; without it only loopback clients may scrape (env WATCHDOG_METRICS_TOKEN).")
    var metricsToken: String?

    @Flag(help: "Mark the dashboard's session cookie Secure (serve behind HTTPS) (env WATCHDOG_COOKIE_SECURE=1).")
    var cookieSecure = false

    @Option(help: "Reports and session starts that may wait for the writer; past it ingest answers 503 with Retry-After instead of growing memory (env WATCHDOG_INGEST_QUEUE_ITEMS, default 100000).")
    var ingestQueueItems: Int?

    @Option(help: "Reports of one issue (fingerprint) that one session may send before the rest are stored but counted apart as flooded, out of every rate and verdict; 0: no cap (env WATCHDOG_FLOOD_CAP, default 10).")
    var floodCap: Int?

    @Option(help: "Days raw reports and session starts are kept; release stats stay. 0 keeps everything (env WATCHDOG_RETENTION_DAYS, default 90).")
    var retentionDays: Int?

    @Option(help: .hidden)
    var retentionInterval: Int?

    @Option(help: "Debian's Chart.js (libjs-chart.js), served to the dashboard (env WATCHDOG_CHART_JS_DIR, default /usr/share/javascript/chart.js).")
    var chartJsDir: String?

    @Option(help: "Directory with openapi.yaml and the dashboard (env WATCHDOG_RESOURCES_DIR, default ./Resources if present, else /usr/share/watchdogd).")
    var resourcesDir: String?

    func run() throws {
        let logger = common.makeLogger()
        let settings = try resolveSettings()
        let lock = try ServeLock(dataDirectory: settings.dataDirectory)
        guard lock.tryLock() else {
            throw CLIError("another watchdogd serve is running on \(settings.dataDirectory)")
        }
        let store = try common.openStore(synchronous: settings.synchronous, floodCap: settings.floodCap)
        SessionCookie.secure = try Environment.resolveFlag(cookieSecure, .cookieSecure)
        let demoMode = try Environment.resolveFlag(demo, .demo)
        if demoMode {
            if try DemoData.install(into: store, nowMilliseconds: WatchdogServer.systemClock()) {
                logger.info("created demo app \(DemoData.app) with two releases of data")
            }
        }

        signal(SIGPIPE, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let stop = DispatchSemaphore(value: 0)
        let sources = [SIGTERM, SIGINT].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }

        let server: WatchdogServer
        do {
            server = try WatchdogServer(settings: settings, store: store, logger: logger)
        } catch {
            throw CLIError("\(error)")
        }
        let host = settings.listen.isIPv6 ? "[\(settings.listen.host)]" : settings.listen.host
        let url = "http://\(host):\(server.port)"
        logger.info("listening", metadata: ["url": "\(url)", "data_dir": "\(settings.dataDirectory)", "synchronous": "\(settings.synchronous.rawValue)"])
        emit("listening on \(url)")
        if demoMode { try printDemoCredentials(store: store, server: server, url: url) }

        stop.wait()
        logger.info("stopping: draining requests in flight and committing queued reports")
        server.shutdown()
        try store.close()
        sources.forEach { $0.cancel() }
        logger.info("stopped cleanly")
        withExtendedLifetime(lock) {}
    }

    private func resolveSettings() throws -> ServerSettings {
        let listenText = Environment.resolve(listen, .listen) ?? "127.0.0.1:8080"
        guard let address = ListenAddress(listenText) else {
            throw ValidationError("\(Environment.origin(.listen, flag: "--listen", given: listen != nil)) must be HOST:PORT with an IP address, e.g. 127.0.0.1:8080 or [::1]:8080, got \(listenText)")
        }
        var settings = ServerSettings(listen: address, dataDirectory: common.resolvedDataDir)
        if let mode = Environment.resolve(synchronous, .synchronous) {
            guard let parsed = SQLiteStore.Synchronous(rawValue: mode.uppercased()) else {
                throw ValidationError("\(Environment.origin(.synchronous, flag: "--synchronous", given: synchronous != nil)) must be full or normal, got \(mode)")
            }
            settings.synchronous = parsed
        }
        settings.httpThreads = try number(httpThreads, .httpThreads, "--http-threads", 1...64) ?? settings.httpThreads
        settings.connectionLimit = try number(connectionLimit, .connectionLimit, "--connection-limit", 1...1_000_000) ?? settings.connectionLimit
        settings.perAddressConnectionLimit = try number(perIpConnectionLimit, .perIPConnectionLimit, "--per-ip-connection-limit", 1...1_000_000) ?? settings.perAddressConnectionLimit
        settings.connectionTimeoutSeconds = try number(connectionTimeout, .connectionTimeout, "--connection-timeout", 1...86_400) ?? settings.connectionTimeoutSeconds
        settings.headerTimeoutSeconds = try number(headerTimeout, .headerTimeout, "--header-timeout", 1...3_600) ?? settings.headerTimeoutSeconds
        settings.configMaxAgeSeconds = try number(configMaxAge, .configMaxAge, "--config-max-age", 0...86_400) ?? settings.configMaxAgeSeconds
        if let chart = Environment.resolve(chartJsDir, .chartJSDir) { settings.chartDirectory = chart }
        if let rate = try number(ratePerKey, .ratePerKey, "--rate-per-key", 0...1_000_000) {
            settings.ingestRatePerKey = Double(rate)
            settings.ingestBurstPerKey = Double(rate * 2)
        }
        if let rate = try number(ratePerAddress, .ratePerAddress, "--rate-per-address", 0...1_000_000) {
            settings.ingestRatePerAddress = Double(rate)
            settings.ingestBurstPerAddress = Double(rate * 5)
        }
        if let rate = try number(failedAuthPerAddress, .failedAuthPerAddress, "--failed-auth-per-address", 0...1_000_000) {
            settings.failedAuthPerAddress = Double(rate)
        }
        settings.metricsToken = Environment.resolve(metricsToken, .metricsToken)
        settings.trustedProxies = Set(trustedProxy.isEmpty
            ? (Environment.resolve(nil, .trustedProxy)?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } ?? [])
            : trustedProxy)
        settings.ingestQueueCapacity = try number(ingestQueueItems, .ingestQueueItems, "--ingest-queue-items", 500...10_000_000) ?? settings.ingestQueueCapacity
        settings.floodCap = try number(floodCap, .floodCap, "--flood-cap", 0...1_000_000) ?? settings.floodCap
        settings.retentionDays = try number(retentionDays, .retentionDays, "--retention-days", 0...36_500) ?? settings.retentionDays
        if let interval = try number(retentionInterval, .retentionInterval, "--retention-interval", 1...86_400) {
            settings.retentionIntervalSeconds = Double(interval)
        }
        settings.resourcesDirectory = Environment.resolve(resourcesDir, .resourcesDir)
            ?? (FileManager.default.fileExists(atPath: "Resources/openapi.yaml") ? "Resources" : "/usr/share/watchdogd")
        return settings
    }

    private func number(_ flag: Int?, _ setting: Setting, _ name: String, _ range: ClosedRange<Int>) throws -> Int? {
        if let flag {
            guard range.contains(flag) else { throw ValidationError("\(name) must be within \(range.lowerBound)…\(range.upperBound)") }
            return flag
        }
        guard let text = Environment.resolve(nil, setting) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw ValidationError("\(Environment.origin(setting)) must be a whole number within \(range.lowerBound)…\(range.upperBound), got \(text)")
        }
        return value
    }

    private func printDemoCredentials(store: SQLiteStore, server: WatchdogServer, url: String) throws {
        let now = WatchdogServer.systemClock()
        var tokens: [String: String] = [:]
        var adminID = ""
        for (role, app, variable) in [(CredentialRole.ingest, DemoData.app as String?, "WATCHDOG_INGEST_KEY"), (.viewer, nil, "WATCHDOG_VIEWER_TOKEN"), (.admin, nil, "WATCHDOG_ADMIN_TOKEN")] {
            // Each demo start replaces the previous demo credentials rather than piling them up.
            _ = try store.revokeCredentials(id: nil, name: "demo \(role.rawValue)", atMilliseconds: now)
            let (record, token) = CredentialIssuer.issue(role: role, app: app, name: "demo \(role.rawValue)", nowMilliseconds: now)
            try store.addCredential(record)
            tokens[variable] = token
            if role == .admin { adminID = record.id }
        }
        let link = try server.signInLink(credentialID: adminID)
        emit("""
            dashboard: \(url)\(link)   (one-time sign-in link, valid 24 h)
            demo app \(DemoData.app) is ready; in a shell:
            export WATCHDOG_URL=\(url)
            export WATCHDOG_INGEST_KEY=\(tokens["WATCHDOG_INGEST_KEY"] ?? "")
            export WATCHDOG_VIEWER_TOKEN=\(tokens["WATCHDOG_VIEWER_TOKEN"] ?? "")
            export WATCHDOG_ADMIN_TOKEN=\(tokens["WATCHDOG_ADMIN_TOKEN"] ?? "")
            """)
    }
}
