import Foundation
import Gzip
import Locking
import TestSupport
import WatchdogKit
import WatchdogWire

/// An in-memory server for an agent: answers `GET /v1/config` with `config`, every upload
/// with 202 for all its items and App Attest's challenge and attestation with 201, and records each request (decompressed) — what was asked, over
/// which kind of network.
final class RecordingTransport: HTTPTransport, Sendable {
    struct Sent: Sendable {
        var method: String
        var path: String
        var headers: [String: String]
        /// The body, decompressed.
        var body: Data
        var allowsConstrainedNetworkAccess: Bool

        /// The session starts of a `POST /v1/sessions`.
        var sessions: [SessionStart] {
            struct Batch: Decodable { var sessions: [SessionStart] }
            return (try? JSONDecoder().decode(Batch.self, from: body))?.sessions ?? []
        }

        /// The reports of a `POST /v1/reports`.
        var reports: [Report] {
            struct Batch: Decodable { var reports: [Report] }
            return (try? JSONDecoder().decode(Batch.self, from: body))?.reports ?? []
        }
    }

    private let sent = Locked<[Sent]>([])
    private let configJSON: Locked<String>

    init(config: String = #"{"enabled": true}"#) {
        configJSON = Locked(config)
    }

    var requests: [Sent] { sent.withLock { $0 } }

    func setConfig(_ json: String) { configJSON.withLock { $0 = json } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        var body = request.body.map { Array($0) } ?? []
        if request.headers["Content-Encoding"] == "gzip" { body = try Gzip.decompress(body, limit: 8 << 20) }
        let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
        let path = request.url.path
        sent.withLock { $0.append(Sent(method: request.method, path: path, headers: request.headers, body: Data(body),
                                       allowsConstrainedNetworkAccess: request.allowsConstrainedNetworkAccess)) }
        if path.hasSuffix("/attest/challenge") {
            return TransportResponse(status: 201, headers: [:], body: Data(#"{"challenge":"Y2hhbGxlbmdl","expires_at":4102444800000}"#.utf8))
        }
        if path.hasSuffix("/attest") {
            return TransportResponse(status: 201, headers: [:], body: Data(#"{"key_id":"k","install_id":"i","environment":"production"}"#.utf8))
        }
        if request.method == "GET" {
            return TransportResponse(status: 200, headers: ["content-type": "application/json"], body: Data(configJSON.withLock { $0 }.utf8))
        }
        let items = (object["reports"] as? [Any] ?? object["sessions"] as? [Any] ?? []).count
        return TransportResponse(status: 202, headers: ["content-type": "application/json"],
                                 body: Data(#"{"accepted":\#(items),"duplicates":0,"rejected":[]}"#.utf8))
    }
}

/// An agent on a fresh storage directory (or `storage`), for the agent-level tests.
@MainActor
struct AgentHarness {
    let storage: URL
    let clock: ManualClock
    let transport: RecordingTransport
    let agent: WatchdogAgent
    var crashes: [TestCrash] { crashLog.withLock { $0 } }
    private let crashLog: Locked<[TestCrash]>

    /// - Parameter offline: the agent gets no answer at all (what it saves stays in the outbox).
    init(storage: URL? = nil, transport: RecordingTransport = RecordingTransport(), offline: Bool = false,
         configure: (inout WatchdogSettings) -> Void = { _ in }) {
        let storage = storage ?? FileManager.default.temporaryDirectory.appendingPathComponent("agent-\(UUID())")
        self.storage = storage
        var settings = WatchdogSettings(endpoint: URL(string: "https://watchdog.example.com")!, ingestKey: "wdi_test", app: "com.example.mail",
                                        release: Release(version: "14.2.0", build: "1"), device: Device(model: "iPhone15,2", os: "iOS", osVersion: "18.1", idiom: "phone"),
                                        idiom: .phone, storageDirectory: storage)
        settings.configRefreshInterval = 0
        settings.host = HostApp(distribution: .testFlight)
        configure(&settings)
        let clock = ManualClock(1000)
        let crashLog = Locked<[TestCrash]>([])
        self.clock = clock
        self.transport = transport
        self.crashLog = crashLog
        // The time of day moves with the test's clock (sessions count real time in the background).
        agent = WatchdogAgent(settings: settings, window: Frame(x: 0, y: 0, width: 390, height: 844), clock: { clock.now },
                              wallClock: { Date(timeIntervalSince1970: 1_795_000_000 + clock.now) }, transport: offline ? OfflineTransport() : transport,
                              crashHandler: { crash in crashLog.withLock { $0.append(crash) } })
    }

    /// A view that is 36 pt off where it belongs: a glitch on every tick.
    func watchMisplacedView() {
        agent.layout.watch(WatchedView(name: "composeToolbar", expectedFrame: { Frame(x: 0, y: 800, width: 390, height: 44) },
                                       actualFrame: { Frame(x: 0, y: 764, width: 390, height: 44) }))
    }

    func ticks(_ count: Int) {
        for _ in 0..<count {
            clock.advance(1)
            agent.check()
        }
    }

    func reports() throws -> [Report] {
        agent.flushWrites()
        return try agent.outbox.pending(.reports, limit: 500, maxBytes: 1 << 30).map { try JSONDecoder().decode(Report.self, from: $0.json) }
    }

    func sessions() throws -> [SessionStart] {
        agent.flushWrites()
        return try agent.outbox.pending(.sessions, limit: 500, maxBytes: 1 << 30).map { try JSONDecoder().decode(SessionStart.self, from: $0.json) }
    }

    /// Writes the cached config the agent starts from (as if fetched on an earlier run).
    static func cacheConfig(_ config: WatchdogConfig, in storage: URL) throws {
        try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
        let cached = try JSONSerialization.data(withJSONObject: ["config": JSONSerialization.jsonObject(with: JSONEncoder().encode(config))])
        try cached.write(to: storage.appendingPathComponent("config.json"))
    }
}
