import Foundation
import Testing
import WatchdogServer
import WatchdogTesting
import WatchdogKit
import WatchdogWire

/// WatchdogKit's outbox and uploader against the real router and store, in memory (one clock for
/// device and server): a revoked key loses nothing, a malformed outbox file costs only itself.
@Suite struct KitDeliveryTests {
    static let release = Release(version: "14.2.0", build: "31245", channel: "beta")

    static func report() -> Report {
        Report(id: UUID().uuidString.lowercased(), kind: "view_frame_mismatch", occurredAt: Timestamp.format(milliseconds: Int64(Date().timeIntervalSince1970 * 1000)),
               app: "com.example.mail", release: release, sessionId: "5f0c7a8e-1d2b-4c3d-9e4f-a1b2c3d4e5f6", appState: "active",
               view: ViewFrames(name: "composeToolbar", expected: Frame(x: 0, y: 584, width: 390, height: 44), actual: Frame(x: 0, y: 620, width: 390, height: 44)))
    }

    static func outbox() throws -> Outbox {
        try Outbox(directory: FileManager.default.temporaryDirectory.appendingPathComponent("kit-\(UUID())"), fallbackRelease: release)
    }

    func releaseStats(_ app: TestApplication, viewer: String) throws -> [String: Any] {
        let stats = try app.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer)
        return (stats.json["releases"] as? [[String: Any]])?.first { $0["release"] as? String == "14.2.0 (31245)" } ?? [:]
    }

    @Test func aRevokedKeyKeepsEverythingUntilANewKeyIsSetThenEveryReportIsStoredExactlyOnce() async throws {
        let app = try TestApplication()
        let admin = try app.addToken(role: "admin")
        let viewer = try app.addToken(role: "viewer")
        let created = try app.client.postJSON("/v1/admin/apps", token: admin, json: ["app": "com.example.mail"])
        // One simulated device on one network: every release listed on sight (admission is not this test's subject).
        try app.store.saveAdmissionSettings(app: "com.example.mail", json: AdmissionSettings.open.json)
        let oldKey = try #require(created.json["ingest_key"] as? String)
        let oldKeyID = try #require(created.json["key_id"] as? String)

        let clock = app.clock
        let outbox = try Self.outbox()
        let logger = TaggedLogger(tag: "keyboard")
        let uploader = Uploader(outbox: outbox, endpoint: TestApplication.endpoint, ingestKey: oldKey, transport: app.transport,
                                clock: { clock.seconds }, random: { 1.0 }, logger: logger, maxItems: 50, maximumBackoff: 60)
        let heard = StatusLog()
        uploader.setStatusHandler { heard.append($0) }
        var ids: Set<String> = []
        func persist(_ count: Int) throws {
            for _ in 0..<count {
                let report = Self.report()
                ids.insert(report.id)
                try outbox.persist(report)
            }
        }
        try outbox.persist(SessionStart(id: UUID().uuidString.lowercased(), startedAt: Timestamp.format(milliseconds: Int64(Date().timeIntervalSince1970 * 1000)),
                                        app: "com.example.mail", release: Self.release))
        try persist(60)
        #expect(await uploader.drain() == .drained)

        // The key is revoked; the app keeps reporting for a while.
        #expect(try app.client.request("DELETE", "/v1/admin/apps/com.example.mail/keys/\(oldKeyID)", token: admin).status == 204)
        try persist(70)
        var due = clock.seconds
        for round in 0..<3 {
            clock.advance(seconds: due - clock.seconds)
            guard case .waitingUntil(let next) = await uploader.drain() else { Issue.record("round \(round): no wait"); return }
            #expect(outbox.count(.reports) == 70 + 10 * round, "round \(round): nothing removed")
            due = next
            try persist(10)
        }
        #expect(due > clock.seconds, "backing off when the new key comes")
        #expect(heard.all == [.delivering, .ingestKeyRefused(status: 401, message: "missing or unknown credentials: send Authorization: Bearer <token>")])
        #expect(logger.recentLines().contains { $0.contains("ingest key refused (401)") })
        #expect(try app.storedReportCount() == 60)

        // A new key is configured: delivery resumes at once, without waiting out the backoff.
        let second = try app.client.postJSON("/v1/admin/apps/com.example.mail/keys", token: admin, json: [:] as [String: String])
        uploader.setIngestKey(oldKey)  // the same key again changes nothing
        #expect(!logger.recentLines().contains { $0.contains("ingest key replaced") })
        uploader.setIngestKey(try #require(second.json["ingest_key"] as? String))
        #expect(logger.recentLines().last == "[keyboard][upload] ingest key replaced; retrying at once")
        #expect(await uploader.drain() == .drained)
        #expect(heard.all.last == .delivering)
        #expect(outbox.count(.reports) == 0)
        let stored = try app.storedReports().map(\.id)
        #expect(stored.count == 160)
        #expect(Set(stored) == ids, "every report stored exactly once")
        let release = try releaseStats(app, viewer: viewer)
        // One simulated session sends them all: past the flood cap they are counted apart, each still once.
        #expect((release["reports"] as? Int ?? 0) + (release["flooded_reports"] as? Int ?? 0) == 160, "counted once in the roll-up")
        #expect(release["sessions"] as? Int == 1)
        #expect(release["client_evicted"] as? Int == 0)
        #expect(release["client_quarantined"] as? Int == 0)
    }

    /// The agent passes a new key to both the uploader and the config client.
    @MainActor @Test func anAgentGivenANewKeyFetchesConfigAndUploadsWithIt() async throws {
        let app = try TestApplication()
        let admin = try app.addToken(role: "admin")
        let created = try app.client.postJSON("/v1/admin/apps", token: admin, json: ["app": "com.example.mail"])
        // One simulated device on one network: every release listed on sight (admission is not this test's subject).
        try app.store.saveAdmissionSettings(app: "com.example.mail", json: AdmissionSettings.open.json)
        let oldKeyID = try #require(created.json["key_id"] as? String)
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("agent-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: storage) }
        var settings = WatchdogSettings(endpoint: TestApplication.endpoint, ingestKey: try #require(created.json["ingest_key"] as? String),
                                        app: "com.example.mail", release: Self.release, device: Device(model: "iPhone15,2", idiom: "phone"), idiom: .phone,
                                        storageDirectory: storage)
        settings.configRefreshInterval = 0
        let clock = app.clock
        let agent = WatchdogAgent(settings: settings, window: Frame(x: 0, y: 0, width: 390, height: 844), clock: { clock.seconds },
                                      transport: app.transport, crashHandler: { _ in })
        let heard = StatusLog()
        agent.setDeliveryStatusHandler { heard.append($0) }
        #expect(try app.client.request("DELETE", "/v1/admin/apps/com.example.mail/keys/\(oldKeyID)", token: admin).status == 204)
        #expect(try app.client.request("PATCH", "/v1/admin/apps/com.example.mail/config", token: admin, body: Array(#"{"auto_fix": true}"#.utf8)).status == 200)
        agent.startSession()
        await agent.syncNow()
        #expect(agent.outbox.count(.sessions) == 1, "kept while the key is refused")
        #expect(agent.config.current.autoFix == false, "the config fetch was refused too")
        #expect(heard.all.first.map { if case .ingestKeyRefused(401, _) = $0 { true } else { false } } == true)

        let second = try app.client.postJSON("/v1/admin/apps/com.example.mail/keys", token: admin, json: [:] as [String: String])
        agent.setIngestKey(try #require(second.json["ingest_key"] as? String))
        await agent.syncNow()
        #expect(agent.outbox.count(.sessions) == 0)
        #expect(agent.config.current.autoFix == true)
        let release = try releaseStats(app, viewer: try app.addToken(role: "viewer"))
        #expect(release["sessions"] as? Int == 1, "the session start kept while the key was refused is stored once")
    }

    @Test func oneMalformedFileInA500ItemOutboxCostsOnlyItself() async throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        try #require(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": [Fixtures.session()]]).status == 202)
        let outbox = try Self.outbox()
        for _ in 0..<500 { try outbox.persist(Self.report()) }
        // A file torn by a broken disk or an old SDK: not JSON any more.
        let victim = outbox.pending(.reports, limit: 500, maxBytes: 1 << 30)[317]
        try Data(victim.json.prefix(100)).write(to: victim.file)

        let uploader = Uploader(outbox: outbox, endpoint: TestApplication.endpoint, ingestKey: key, transport: app.transport, clock: { 0 }, logger: TaggedLogger(tag: "t"))
        #expect(await uploader.drain() == .drained)
        #expect(try app.storedReportCount() == 499)
        #expect(outbox.count(.reports) == 0)
        #expect(outbox.quarantinedFiles(.reports) == 1)
        #expect(FileManager.default.fileExists(atPath: outbox.directory.appendingPathComponent("quarantine/reports/\(victim.file.lastPathComponent)").path))
        let release = try releaseStats(app, viewer: viewer)
        #expect((release["reports"] as? Int ?? 0) + (release["flooded_reports"] as? Int ?? 0) == 499)
        #expect(release["client_quarantined"] as? Int == 1, "the quarantined item is counted on the server")
        #expect(outbox.unsentDrops().isEmpty)
    }
}

/// Statuses a handler heard, from any thread.
final class StatusLog: @unchecked Sendable {
    private let lock = NSLock()
    private var statuses: [DeliveryStatus] = []
    func append(_ status: DeliveryStatus) { lock.lock(); statuses.append(status); lock.unlock() }
    var all: [DeliveryStatus] { lock.lock(); defer { lock.unlock() }; return statuses }
}
