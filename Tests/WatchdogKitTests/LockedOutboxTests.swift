import Foundation
import Testing
import TestSupport
import WatchdogKit
import WatchdogWire

/// An iPhone locked since it booted: the outbox is protected until the first unlock, so every
/// write into it fails. Here the failure is real — the outbox's folders are replaced by plain
/// files, so `open` fails the way it does for a protected file — and the agent must fail
/// cleanly (no throw, no test crash without a report on disk), keep what it could not write and
/// write it once the outbox is writable again, losing nothing.
@Suite struct LockedOutboxTests {
    /// Makes the outbox's folders unwritable (or writable again).
    struct Lock {
        let outbox: URL

        func engage() throws {
            for kind in Outbox.Kind.allCases {
                let folder = outbox.appendingPathComponent(kind.rawValue)
                try FileManager.default.moveItem(at: folder, to: outbox.appendingPathComponent("\(kind.rawValue).unlocked"))
                try Data("locked".utf8).write(to: folder)
            }
        }

        func release() throws {
            for kind in Outbox.Kind.allCases {
                let folder = outbox.appendingPathComponent(kind.rawValue)
                try FileManager.default.removeItem(at: folder)
                try FileManager.default.moveItem(at: outbox.appendingPathComponent("\(kind.rawValue).unlocked"), to: folder)
            }
        }
    }

    @MainActor @Test func writesRefusedBeforeTheFirstUnlockFailCleanlyAndAreRetriedWithNothingLost() throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("wk-\(UUID())")
        try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
        // A cached config with test_crash on: a glitch whose report cannot be saved must not crash.
        var config = WatchdogConfig()
        config.testCrash = true
        config.lockThresholdS = 1
        let cached = try JSONSerialization.data(withJSONObject: ["config": JSONSerialization.jsonObject(with: JSONEncoder().encode(config))])
        try cached.write(to: storage.appendingPathComponent("config.json"))
        let clock = ManualClock(1000)
        var crashes: [TestCrash] = []
        var settings = WatchdogSettings(
            endpoint: URL(string: "http://127.0.0.1:1")!, ingestKey: "wdi_test", app: "com.example.mail",
            release: Release(version: "14.2.0", build: "1"), device: Device(model: "iPhone15,2", os: "iOS", osVersion: "18.1", idiom: "phone"),
            idiom: .phone, storageDirectory: storage)
        settings.allowsTestCrash = true
        settings.host = HostApp(distribution: .testFlight)
        let agent = WatchdogAgent(settings: settings, window: Frame(x: 0, y: 0, width: 390, height: 844), clock: { clock.now },
                                      crashHandler: { crashes.append($0) })
        let outbox = storage.appendingPathComponent("outbox")
        let lock = Lock(outbox: outbox)
        try lock.engage()

        agent.startSession()
        agent.layout.watch(WatchedView(name: "composeToolbar", expectedFrame: { Frame(x: 0, y: 800, width: 390, height: 44) },
                                       actualFrame: { Frame(x: 0, y: 500, width: 390, height: 44) }))
        agent.locks.begin(flags: ["push": true])
        for _ in 0..<3 {
            clock.advance(1)
            agent.check()
        }
        #expect(agent.outbox.count(.reports) == 0 && agent.outbox.count(.sessions) == 0, "nothing could be written")
        #expect(crashes.isEmpty, "no test crash for a report that is not on disk")
        #expect(agent.writesWaiting == 3, "the session start, the glitch and the lock are kept")
        #expect(agent.logger.recentLines().contains { $0.contains("could not save report") && $0.contains("kept for a later try") })

        clock.advance(1)
        agent.check()  // still locked: retried, still kept
        #expect(agent.writesWaiting == 3)

        try lock.release()
        clock.advance(1)
        agent.check()
        #expect(agent.writesWaiting == 0)
        #expect(agent.outbox.count(.sessions) == 1)
        let reports = try agent.outbox.pending(.reports, limit: 10, maxBytes: 1 << 20).map { try JSONDecoder().decode(Report.self, from: $0.json) }
        #expect(reports.map(\.kind).sorted() == ["interaction_lock", "view_frame_mismatch"])
        let glitch = try #require(reports.first { $0.kind == "view_frame_mismatch" })
        #expect(glitch.action?.testCrash == false, "the saved report says it did not crash")
        #expect(glitch.logs?.contains { $0.contains("crashing once this report is saved") } == false)
        #expect(agent.reportsSaved == 2)
        #expect(crashes.isEmpty)
    }
}
