import Foundation
import Testing
import WatchdogKit
import WatchdogWire

/// A launch before the first unlock after a reboot (a background launch for a push): the
/// storage directory's files exist but cannot be read. Here they are made unreadable for real —
/// each replaced by a folder of the same name, so reading it fails while it still exists — and
/// the agent must start anyway, keep the install's id (never make a new one), collect nothing
/// until it can read the tester's choice, and pick everything up once protected data is available.
@MainActor @Suite struct FirstUnlockTests {
    /// Makes the storage directory's small files unreadable (as protected files are before the
    /// first unlock), or readable again.
    struct Lock {
        let storage: URL
        let names = ["install-id", "consent.json", "config.json"]

        func engage() throws {
            for name in names {
                let file = storage.appendingPathComponent(name)
                try FileManager.default.moveItem(at: file, to: storage.appendingPathComponent("\(name).unlocked"))
                try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
            }
        }

        func release() throws {
            for name in names {
                let file = storage.appendingPathComponent(name)
                try FileManager.default.removeItem(at: file)
                try FileManager.default.moveItem(at: storage.appendingPathComponent("\(name).unlocked"), to: file)
            }
        }
    }

    @Test func aLaunchBeforeTheFirstUnlockKeepsTheInstallIdCollectsNothingAndPicksUpOnceUnlocked() async throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("agent-\(UUID())")
        var cached = WatchdogConfig()
        cached.version = 7
        cached.lockThresholdS = 3
        try AgentHarness.cacheConfig(cached, in: storage)
        // An earlier launch made the install id and saved the tester's yes.
        let earlier = AgentHarness(storage: storage, offline: true)
        let installID = try #require(earlier.agent.installID)
        earlier.agent.isCollectionEnabled = true
        let lock = Lock(storage: storage)
        try lock.engage()

        let transport = RecordingTransport()
        let harness = AgentHarness(storage: storage, transport: transport)
        #expect(harness.agent.installID == nil, "not readable yet, and no new one made")
        #expect(harness.agent.isCollecting == false)
        harness.watchMisplacedView()
        harness.agent.startSession()
        let asked = Date()
        harness.ticks(3)
        await harness.agent.syncNow()
        #expect(try harness.reports().isEmpty && harness.sessions().isEmpty)
        #expect(transport.requests.isEmpty, "nothing sent without the install id and the tester's choice")
        #expect(harness.agent.config.current.version == 0, "the cached config is not readable either")

        try lock.release()
        harness.agent.protectedDataDidBecomeAvailable()
        #expect(harness.agent.installID == installID)
        #expect(harness.agent.config.current.version == 7 && harness.agent.config.current.lockThresholdS == 3, "the cached config, read now")
        await harness.agent.syncNow()
        let session = try #require(transport.requests.flatMap(\.sessions).first)
        #expect(session.installId == installID)
        let started = try #require(Timestamp.parseMilliseconds(session.startedAt))
        #expect(abs(Double(started) / 1000 - asked.timeIntervalSince1970) < 1, "the session started when it was asked for")
        harness.ticks(3)
        await harness.agent.syncNow()
        #expect(transport.requests.flatMap(\.reports).map(\.installId) == [installID])
        #expect(try String(contentsOf: storage.appendingPathComponent("install-id"), encoding: .utf8) == installID)
    }

    /// Unreadable consent never counts as a yes, even where collection is on by default.
    @Test func anUnreadableChoiceIsANoUntilItCanBeRead() throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("agent-\(UUID())")
        let earlier = AgentHarness(storage: storage, offline: true)
        earlier.agent.isCollectionEnabled = false
        try FileManager.default.moveItem(at: storage.appendingPathComponent("consent.json"), to: storage.appendingPathComponent("consent.saved"))
        try FileManager.default.createDirectory(at: storage.appendingPathComponent("consent.json"), withIntermediateDirectories: false)
        let harness = AgentHarness(storage: storage, offline: true)
        #expect(harness.agent.installID != nil)
        #expect(harness.agent.isCollectionEnabled == false)
        try FileManager.default.removeItem(at: storage.appendingPathComponent("consent.json"))
        try FileManager.default.moveItem(at: storage.appendingPathComponent("consent.saved"), to: storage.appendingPathComponent("consent.json"))
        harness.agent.protectedDataDidBecomeAvailable()
        #expect(harness.agent.isCollectionEnabled == false, "the saved no, read now")
    }
}
