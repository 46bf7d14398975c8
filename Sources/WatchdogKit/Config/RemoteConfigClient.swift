import Locking
import Foundation

/// Fetches the effective config from watchdogd: conditional requests (`If-None-Match`), at
/// most once per `minimumInterval`, the last good config cached on disk, defaults when the
/// server was never reached.
public final class RemoteConfigClient: Sendable {
    private struct Cached: Codable {
        var etag: String?
        var config: WatchdogConfig
    }

    private struct State {
        var cached: Cached
        var lastAttempt: Double = -.infinity
        var ingestKey: String
        var url: URL
    }

    private let endpoint: URL
    private let query: [URLQueryItem]
    private let transport: any HTTPTransport
    private let cacheFile: URL
    private let clock: @Sendable () -> Double
    /// Seconds between two fetches at least (a forced refresh aside).
    public let minimumInterval: Double
    private let logger: TaggedLogger
    private let state: Locked<State>

    /// - Parameters:
    ///   - endpoint: the server's base URL; the config is `GET /v1/config` under it.
    ///   - app: the bundle id the config is for.
    ///   - version: the release's version (rules can target it).
    ///   - build: the release's build.
    ///   - channel: the release channel (`beta`, …), if any.
    ///   - idiom: the device idiom (`phone`, `pad`), if rules should see it.
    ///   - installID: the install, for rules that roll out to a share of installs.
    ///   - ingestKey: the app's ingest key (`setIngestKey` changes it).
    ///   - cacheFile: where the last good config and its ETag are kept.
    ///   - transport: how requests are sent.
    ///   - clock: monotonic seconds.
    ///   - minimumInterval: seconds between two fetches at least.
    ///   - logger: where fetch failures are logged.
    public init(endpoint: URL, app: String, version: String, build: String, channel: String?, idiom: String? = nil, installID: String, ingestKey: String,
                cacheFile: URL, transport: any HTTPTransport = URLSessionTransport(), clock: @escaping @Sendable () -> Double,
                minimumInterval: Double = 300, logger: TaggedLogger) {
        self.endpoint = endpoint
        query = [
            URLQueryItem(name: "app", value: app), URLQueryItem(name: "version", value: version), URLQueryItem(name: "build", value: build),
            URLQueryItem(name: "channel", value: channel), URLQueryItem(name: "idiom", value: idiom),
        ].filter { $0.value != nil }
        let url = Self.url(endpoint, query, installID: installID)
        self.transport = transport
        self.cacheFile = cacheFile
        self.clock = clock
        self.minimumInterval = minimumInterval
        self.logger = logger.child("config")
        let cached = (try? Data(contentsOf: cacheFile)).flatMap { try? JSONDecoder().decode(Cached.self, from: $0) }
        state = Locked(State(cached: cached ?? Cached(etag: nil, config: WatchdogConfig()), ingestKey: ingestKey, url: url))
    }

    private static func url(_ endpoint: URL, _ query: [URLQueryItem], installID: String) -> URL {
        var components = URLComponents(url: endpoint.appendingPathComponent("v1").appendingPathComponent("config"), resolvingAgainstBaseURL: false)
        components?.queryItems = query + (installID.isEmpty ? [] : [URLQueryItem(name: "install_id", value: installID)])
        return components?.url ?? endpoint
    }

    /// The install id, once it could be read (a launch before the first unlock starts without it).
    public func setInstallID(_ installID: String) {
        let url = Self.url(endpoint, query, installID: installID)
        state.withLock { $0.url = url }
    }

    /// Reads the cached config again (it could not be read before the first unlock), unless a
    /// fetch has brought one meanwhile.
    public func reloadCache() {
        guard let cached = (try? Data(contentsOf: cacheFile)).flatMap({ try? JSONDecoder().decode(Cached.self, from: $0) }) else { return }
        state.withLock { state in
            if state.cached.config.version == 0 { state.cached = cached }
        }
    }

    /// A new ingest key (the old one was revoked); the next refresh uses it.
    public func setIngestKey(_ key: String) {
        state.withLock { $0.ingestKey = key }
    }

    /// The config in force: the last one fetched, or the defaults.
    public var current: WatchdogConfig { state.withLock { $0.cached.config } }

    /// Fetches if `minimumInterval` has passed since the last attempt (or at once with
    /// `force`, e.g. right after a test-crash report went up); returns whether the config changed.
    @discardableResult
    public func refreshIfDue(force: Bool = false) async -> Bool {
        let due: (etag: String?, key: String, url: URL)? = state.withLock { state in
            guard force || clock() - state.lastAttempt >= minimumInterval else { return nil }
            state.lastAttempt = clock()
            return (state.cached.etag, state.ingestKey, state.url)
        }
        guard let (etag, key, url) = due else { return false }
        var headers = ["Authorization": "Bearer \(key)"]
        if let etag { headers["If-None-Match"] = etag }
        do {
            let response = try await transport.send(TransportRequest(method: "GET", url: url, headers: headers))
            switch response.status {
            case 304:
                return false
            case 200:
                var config = try JSONDecoder().decode(WatchdogConfig.self, from: response.body)
                if let version = response.headers["x-config-version"].flatMap(Int.init) { config.version = version }
                let cached = Cached(etag: response.headers["etag"], config: config)
                let changed: Bool = state.withLock { state in
                    let changed = state.cached.config != config
                    state.cached = cached
                    return changed
                }
                try? JSONEncoder().encode(cached).write(to: cacheFile, options: .atomic)
                if changed { logger.log("config version \(config.version): test_crash=\(config.testCrash) auto_fix=\(config.autoFix) enabled=\(config.enabled)") }
                return changed
            default:
                logger.log("config fetch got \(response.status); keeping version \(current.version)")
                return false
            }
        } catch {
            logger.log("config fetch failed (\(error)); keeping version \(current.version)")
            return false
        }
    }
}
