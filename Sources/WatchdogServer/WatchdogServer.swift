import Dispatch
import Foundation
import Logging
import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// The watchdogd service on HTTP: a `WatchdogApplication` served by libmicrohttpd, and the
/// retention job.
///
/// ```swift
/// let server = try WatchdogServer(settings: settings, store: store, logger: logger)
/// print(server.port)
/// server.shutdown()   // drains requests, commits queued batches
/// ```
public final class WatchdogServer: Sendable {
    private let http: HTTPServer
    private let application: WatchdogApplication
    private let logger: Logger
    private let settings: ServerSettings
    private let retention: RetentionJob?

    /// The bound port.
    public var port: UInt16 { http.port }

    public init(settings: ServerSettings, store: any TelemetryStore, logger: Logger, clock: @escaping @Sendable () -> Int64 = WatchdogServer.systemClock) throws {
        let application = try WatchdogApplication(settings: settings, store: store, logger: logger, clock: clock, attestationRoots: Self.attestationRoots())
        // Before listening: the first dashboard view after a restart is as fast as the next one.
        // Bounded, so a large install still starts taking reports within a few seconds.
        let warmed = application.warmUp(for: Self.warmUpNanoseconds)
        logger.info("warmed up: \(warmed)")
        var configuration = HTTPServerConfiguration(address: settings.listen) { APIError.from($0).response }
        configuration.threads = settings.httpThreads
        configuration.connectionLimit = settings.connectionLimit
        configuration.perAddressConnectionLimit = settings.perAddressConnectionLimit
        configuration.connectionTimeoutSeconds = settings.connectionTimeoutSeconds
        configuration.headerTimeoutSeconds = settings.headerTimeoutSeconds
        configuration.maxBodyBytes = Limits.bodyBytes
        configuration.maxDecodedBodyBytes = Limits.bodyBytes
        configuration.maxBufferedBodyBytes = settings.bodyMemoryMiB << 20
        configuration.maxBufferedBodyBytesPerClient = settings.bodyMemoryPerClientMiB << 20
        configuration.maxBodyWaitSeconds = settings.bodyWaitSeconds
        configuration.bodyDeadlineSeconds = settings.bodyDeadlineSeconds
        configuration.minBodyBytesPerSecond = settings.bodyMinRateKiB << 10
        configuration.bodyDeadlineMissed = { [metrics = application.metrics] _ in metrics.bodyDeadlineMissed.increment() }
        configuration.connectionShed = { [metrics = application.metrics] reason in metrics.connectionsShed[reason]?.increment() }
        let router = application.router
        configuration.admit = { router.admit($0) }
        let configFastPath = application.configFastPath
        configuration.answerFromHeaders = { configFastPath.answer($0) }
        do {
            // The whole adaptation: a response now is given at once; one promised for later
            // leaves the connection suspended until the promise is kept.
            http = try HTTPServer(configuration: configuration, logger: logger) { request, responder in
                router.respond(to: request).whenReady { responder.respond($0) }
            }
        } catch {
            application.stop()
            throw error
        }
        self.application = application
        retention = RetentionJob(store: store, retentionDays: settings.retentionDays, auditRetentionDays: settings.auditRetentionDays,
                                 intervalSeconds: settings.retentionIntervalSeconds,
                                 clock: clock, logger: logger)
        self.logger = logger
        self.settings = settings
    }

    /// A one-time dashboard sign-in link (`/login?code=…`, valid 24 h) for a viewer or admin credential.
    public func signInLink(credentialID: String) throws -> String {
        try application.signInLink(credentialID: credentialID)
    }

    /// Whether the ingest writer, woken now, finishes a round of work within `seconds` (a commit
    /// or finding nothing to do): false while it is stuck. For systemd's watchdog.
    public func writerMakesProgress(withinSeconds seconds: Double) -> Bool {
        application.queue.makesProgress(withinSeconds: seconds)
    }

    /// Stops accepting, answers requests in flight, commits every queued batch, then frees the
    /// HTTP server. The writer is stopped before libmicrohttpd, because the requests it still
    /// has to answer hold suspended connections.
    public func shutdown() {
        retention?.stop()
        http.stopAccepting()
        http.waitForRequests(upTo: settings.drainSeconds)
        application.stop()
        http.waitForRequests(upTo: 5)
        http.stop()
        if let sqlite = application.store as? SQLiteStore {
            do { try sqlite.checkpoint() } catch { logger.warning("final WAL checkpoint failed: \(error)") }
        }
    }

    /// How long a start may spend filling the release caches before it listens.
    static let warmUpNanoseconds: UInt64 = 2_000_000_000

    /// Milliseconds since the epoch, from the system clock.
    public static let systemClock: @Sendable () -> Int64 = {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }

    /// A debug build's daemon (what `swift test` starts) trusts the CA in the PEM file this
    /// variable names instead of Apple's App Attestation root, for the daemon tests' attested
    /// fleets. Release builds — the .deb, the image — never read it: they pin Apple's root.
    public static let testAttestationRootVariable = "WATCHDOG_TESTING_ATTESTATION_ROOT_PEM_FILE"

    static func attestationRoots() throws -> [String] {
        #if DEBUG
        if let path = ProcessInfo.processInfo.environment[testAttestationRootVariable] {
            return [try String(contentsOfFile: path, encoding: .utf8)]
        }
        #endif
        return [AppAttestRoot.pem]
    }
}
