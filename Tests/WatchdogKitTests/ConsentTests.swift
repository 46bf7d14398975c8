import Foundation
import Testing
import WatchdogKit
import WatchdogWire

/// Testers who can say no, and a deliberate crash only where the app allows it: collection
/// switched off stays off (across restarts, whatever the remote config says), what waits can
/// be deleted, and `test_crash` needs the app's permission and a build that is not the App Store's.
@MainActor @Suite struct ConsentTests {
    @Test func collectionSwitchedOffStopsChecksWritesAndUploadsWhateverTheRemoteConfigSaysAndSurvivesARestart() async throws {
        let harness = AgentHarness()
        harness.watchMisplacedView()
        harness.agent.isCollectionEnabled = false
        harness.agent.startSession()
        var observed = 0
        for _ in 0..<3 {
            harness.clock.advance(1)
            harness.agent.tick(harness.agent.mainScene) { observed += 1; return .clear }
        }
        await harness.agent.syncNow()
        #expect(harness.agent.config.current.enabled, "the remote config says on")
        #expect(try harness.sessions().isEmpty && harness.reports().isEmpty, "no session start, no report")
        #expect(observed == 0, "no look at the view tree")
        #expect(harness.transport.requests.isEmpty, "no upload, no config fetch")

        // A restart: the choice holds.
        let again = AgentHarness(storage: harness.storage, transport: harness.transport)
        #expect(again.agent.isCollectionEnabled == false)
        again.agent.startSessionIfNeeded()
        await again.agent.syncNow()
        #expect(harness.transport.requests.isEmpty)

        // Yes again: a session starts and goes up.
        again.agent.isCollectionEnabled = true
        await again.agent.syncNow()
        #expect(harness.transport.requests.first?.path == "/v1/sessions" && harness.transport.requests.dropFirst().allSatisfy { $0.path == "/v1/config" })
    }

    @Test func collectionIsOnByDefaultUnlessTheAppAsksFirst() {
        #expect(AgentHarness().agent.isCollectionEnabled)
        #expect(AgentHarness(configure: { $0.collectsByDefault = false }).agent.isCollectionEnabled == false)
    }

    @Test func deleteUnsentDataRemovesTheOutboxDropCountsHeldLogLinesAndTheAttestationState() throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("agent-\(UUID())")
        try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
        try Data(#"{"key_id":"a2V5","attested":true}"#.utf8).write(to: storage.appendingPathComponent("app-attest.json"))
        let harness = AgentHarness(storage: storage, offline: true) { $0.appAttest = UnsupportedAppAttest() }
        harness.watchMisplacedView()
        harness.agent.startSession()
        harness.ticks(3)
        #expect(try harness.reports().count == 1, "\(harness.agent.logger.recentLines())")
        #expect(try harness.sessions().count == 1)
        let items = harness.agent.outbox.pending(.reports, limit: 1, maxBytes: 1 << 20)
        harness.agent.outbox.quarantine(items, kind: .reports)
        harness.agent.startSession()
        #expect(harness.agent.outbox.unsentDrops().count == 1 && harness.agent.outbox.quarantinedFiles(.reports) == 1)

        harness.agent.deleteUnsentData()
        #expect(harness.agent.outbox.count(.reports) == 0 && harness.agent.outbox.count(.sessions) == 0)
        #expect(harness.agent.outbox.quarantinedFiles(.reports) == 0)
        #expect(harness.agent.outbox.unsentDrops().isEmpty, "no drop count waits either")
        #expect(!FileManager.default.fileExists(atPath: storage.appendingPathComponent("app-attest.json").path), "the key's state is gone")
        #expect(harness.agent.logger.recentLines() == ["[keyboard] unsent data deleted by the app"], "the log lines reports would carry are gone")
    }

    /// `test_crash` on in the remote config crashes only a build the app allows to, and never
    /// one from the App Store; the report says whether it crashed and the log why not.
    @Test(arguments: [
        (false, AppDistribution.testFlight, false), (true, .appStore, false), (true, .unknown, false),
        (true, .testFlight, true), (true, .development, true),
    ])
    func aTestCrashNeedsTheAppsPermissionAndNeverHappensInAnAppStoreBuild(allows: Bool, distribution: AppDistribution, crashes: Bool) throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("agent-\(UUID())")
        var config = WatchdogConfig()
        config.testCrash = true
        try AgentHarness.cacheConfig(config, in: storage)
        let harness = AgentHarness(storage: storage, offline: true) { settings in
            settings.allowsTestCrash = allows
            settings.host = HostApp(distribution: distribution)
        }
        harness.watchMisplacedView()
        harness.ticks(3)
        #expect(harness.crashes.count == (crashes ? 1 : 0), "\(allows) \(distribution)")
        let report = try #require(try harness.reports().first)
        #expect(report.action?.testCrash == crashes)
        #expect((report.logs ?? []).contains { $0.contains("this build does not allow it") } == !crashes)
    }

    @Test func theDistributionIsReadFromTheBundleAndAnythingUnplacedCountsAsTheAppStore() {
        #expect(AppDistribution.decide(receiptName: "sandboxReceipt", hasProvisioningProfile: false, isSimulator: false) == .testFlight)
        #expect(AppDistribution.decide(receiptName: "receipt", hasProvisioningProfile: false, isSimulator: false) == .appStore)
        #expect(AppDistribution.decide(receiptName: nil, hasProvisioningProfile: false, isSimulator: false) == .appStore)
        #expect(AppDistribution.decide(receiptName: "sandboxReceipt", hasProvisioningProfile: true, isSimulator: false) == .development)
        #expect(AppDistribution.decide(receiptName: nil, hasProvisioningProfile: false, isSimulator: true) == .development)
        #expect(HostApp.isAppExtension(bundlePath: "/var/containers/Bundle/Application/X/Mail.app/PlugIns/Share.appex"))
        #expect(!HostApp.isAppExtension(bundlePath: "/var/containers/Bundle/Application/X/Mail.app"))
    }
}

/// App Attest where it is not supported (a simulator): the agent keeps its state file but never attests.
struct UnsupportedAppAttest: AppAttestService {
    struct Unsupported: Error {}
    var isSupported: Bool { false }
    func generateKey() async throws -> String { throw Unsupported() }
    func attestKey(_ keyID: String, challenge: Data) async throws -> Data { throw Unsupported() }
    func generateAssertion(_ keyID: String, body: Data) async throws -> Data { throw Unsupported() }
    func classify(_ error: any Error) -> AppAttestFailure { .other }
}
