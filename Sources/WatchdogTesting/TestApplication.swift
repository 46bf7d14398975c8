import Foundation
import Locking
import Logging
import WatchdogHTTP
@_spi(Testing) import WatchdogServer
import WatchdogStore

/// The whole watchdogd router over a real `SQLiteStore` in a temporary directory (or a real
/// PostgreSQL, see `TestStore`), called in memory: no process, no socket, no port
/// (HummingbirdTesting's `.router` mode).
///
/// ```swift
/// let app = try TestApplication()
/// let key = try app.addApp("com.example.mail")
/// let response = try app.client.postJSON("/v1/reports", token: key, json: ["reports": [report]])
/// #expect(response.status == 202)
/// ```
///
/// Time is `clock`, a `TestClock` the test moves forward; nothing here sleeps.
public final class TestApplication {
    public let dataDirectory: URL
    public private(set) var store: any TelemetryStore
    /// The store as `SQLiteStore`, for tests of the SQLite file itself (they run only on SQLite).
    public var sqlite: SQLiteStore {
        get throws {
            guard let sqlite = store as? SQLiteStore else { throw TestClientError(description: "this test needs the SQLite store") }
            return sqlite
        }
    }
    public private(set) var application: WatchdogApplication
    public let clock: TestClock
    public let settings: ServerSettings
    /// Which store this application runs on (`TestStore.current` unless given).
    public let storeKind: TestStore
    private let logger: Logger
    private var stopped = false
    /// The CA App Attest chains must end at (PEM): Apple's unless a test gives its own.
    private let attestationRoots: [String]?

    /// Starts the application on a fresh data dir. Rate limits are off unless `configure` sets
    /// them (tests post from one address far faster than devices do), as for the live daemon.
    /// - Parameter sharing: another application whose store this one opens too — on
    ///   PostgreSQL, a second node of a cluster.
    /// - Parameter storeKind: the store to run on, whatever `WATCHDOG_TEST_STORE` says.
    /// - Parameter attestationRoots: a test CA (`AppAttestFixture.rootPEM`) trusted instead of
    ///   Apple's App Attestation root.
    public init(clock: TestClock = TestClock(), sharing: TestApplication? = nil, storeKind: TestStore? = nil, attestationRoots: [String]? = nil,
                configure: (inout ServerSettings) throws -> Void = { _ in }) throws {
        dataDirectory = sharing?.dataDirectory ?? FileManager.default.temporaryDirectory.appendingPathComponent("watchdog-testing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        var settings = ServerSettings(listen: ListenAddress("127.0.0.1:0")!, dataDirectory: dataDirectory.path)
        settings.ingestRatePerKey = 0
        settings.ingestRatePerAddress = 0
        settings.resourcesDirectory = TestApplication.resources.path
        // Alert passes run when a test calls `application.evaluateAlerts()`/`deliverAlerts()`.
        settings.alertsInBackground = false
        try configure(&settings)
        self.settings = settings
        self.clock = clock
        self.storeKind = storeKind ?? sharing?.storeKind ?? .current
        var logger = Logger(label: "watchdog-testing")
        logger.logLevel = .warning
        self.logger = logger
        store = try self.storeKind.open(directory: dataDirectory, synchronous: settings.synchronous, floodCap: settings.floodCap)
        self.attestationRoots = attestationRoots
        application = try Self.application(settings: settings, store: store, logger: logger, clock: clock, attestationRoots: attestationRoots)
    }

    private static func application(settings: ServerSettings, store: any TelemetryStore, logger: Logger, clock: TestClock,
                                    attestationRoots: [String]?) throws -> WatchdogApplication {
        guard let attestationRoots else { return try WatchdogApplication(settings: settings, store: store, logger: logger, clock: clock.milliseconds) }
        return try WatchdogApplication(settings: settings, store: store, logger: logger, clock: clock.milliseconds, attestationRoots: attestationRoots)
    }

    /// A test that ends without `stop()` stops here: its threads and (on PostgreSQL) its
    /// connections do not outlive it.
    deinit {
        try? stop()
    }

    /// Stops the application (committing queued batches) and closes the store, as a daemon
    /// that exits; `restart` opens both again.
    public func stop() throws {
        guard !stopped else { return }
        application.stop()
        try store.close()
        stopped = true
    }

    /// Opens the store and the application again on the same directory (stopping them first if
    /// they run): what a restart keeps is what the files hold.
    public func restart() throws {
        try stop()
        store = try storeKind.open(directory: dataDirectory, synchronous: settings.synchronous, floodCap: settings.floodCap)
        application = try Self.application(settings: settings, store: store, logger: logger, clock: clock, attestationRoots: attestationRoots)
        stopped = false
    }

    /// The repository's `Resources` (openapi.yaml, the dashboard).
    public static let resources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Resources")

    /// A client whose requests come from `address` (loopback by default).
    public func client(from address: String) -> TestClient { TestClient(application: application, clientAddress: address) }

    /// A client on loopback.
    public var client: TestClient { client(from: "127.0.0.1") }

    /// Creates an app and returns its ingest key, as `watchdogd apps add --admission …` does.
    /// `admission`: the app's settings; `open` (every release listed on sight, no session
    /// limits, no concentration marks) unless a test is about them — tests post whole fleets
    /// from one address in one hour.
    @discardableResult
    public func addApp(_ app: String, admission: AdmissionSettings? = .open) throws -> String {
        _ = try store.createApp(app, createdAtMilliseconds: clock.now)
        if let admission { try store.saveAdmissionSettings(app: app, json: admission.json) }
        let (record, token) = CredentialIssuer.issue(role: .ingest, app: app, name: "\(app) ingest key", nowMilliseconds: clock.now)
        try store.addCredential(record)
        return token
    }

    /// Every stored report of every app, newest first, read through the store's API.
    public func storedReports() throws -> [StoredReport] {
        var all: [StoredReport] = []
        for app in try store.apps() {
            var before: Int64?
            while true {
                let page = try store.reports(app: app.app, filter: ReportFilter(), before: before, limit: 1000)
                all += page
                guard page.count == 1000, let last = page.last else { break }
                before = last.sequence
            }
        }
        return all
    }

    public func storedReportCount() throws -> Int { try storedReports().count }

    /// Creates a viewer, operator or admin token, as `watchdogd tokens add` does; `apps`: the
    /// apps it is limited to (`--app`), `nil` for every app.
    public func addToken(role: String, name: String = "test", apps: [String]? = nil) throws -> String {
        guard let role = CredentialRole(rawValue: role), role != .ingest else { throw TestClientError(description: "role must be viewer, operator or admin") }
        let (record, token) = CredentialIssuer.issue(role: role, app: nil, name: name, nowMilliseconds: clock.now, apps: apps)
        try store.addCredential(record)
        return token
    }
}

/// A clock the test moves by hand, in milliseconds since the epoch; it starts at the real time
/// (reports are validated against it) and never moves by itself.
public final class TestClock: Sendable {
    private let current: Locked<Int64>

    public init(now: Int64 = WatchdogServer.systemClock()) {
        current = Locked(now)
    }

    public var now: Int64 { current.withLock { $0 } }

    /// Moves the clock forward.
    public func advance(milliseconds: Int64) {
        current.withLock { $0 += milliseconds }
    }

    /// The same time in seconds, for WatchdogKit (whose clocks are `() -> Double`).
    public var seconds: Double { Double(now) / 1000 }

    /// Moves the clock forward by whole milliseconds, rounding up: a deadline computed from
    /// `seconds` is then never missed by a fraction.
    public func advance(seconds: Double) {
        advance(milliseconds: Int64((seconds * 1000).rounded(.up)))
    }

    /// The clock as the application takes it.
    public var milliseconds: @Sendable () -> Int64 { { [current] in current.withLock { $0 } } }
}
