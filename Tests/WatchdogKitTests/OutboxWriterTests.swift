import Dispatch
import Foundation
import Testing
@testable import WatchdogKit
import WatchdogWire

/// The outbox's `fsync` off the main thread, with the order a deliberate crash needs.
@Suite struct OutboxWriterTests {
    static func report() -> Report {
        var report = DeliveryTests.report()
        report.kind = "keyboard_without_input"
        report.view = nil
        return report
    }

    /// Reports handed over return at once, written on the writer's queue; the report a crash
    /// follows is written synchronously, after them, and only then does `persist` return.
    @Test func reportsAreWrittenOffTheCallersThreadAndACrashsReportAfterThem() throws {
        let outbox = try Outbox(directory: FileManager.default.temporaryDirectory.appendingPathComponent("wk-\(UUID())"))
        let queue = DispatchQueue(label: "outbox-writer-test")
        let writer = OutboxWriter(outbox: outbox, logger: TaggedLogger(tag: "keyboard"), queue: queue)
        queue.suspend()
        let first = Self.report(), second = Self.report(), crash = Self.report()
        writer.enqueue(first)
        writer.enqueue(second)
        #expect(outbox.count(.reports) == 0, "handed over: the caller wrote nothing")
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? writer.persist(crash)
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 0.3) == .timedOut, "the crash's report waits for the ones before it")
        queue.resume()
        #expect(done.wait(timeout: .now() + 10) == .success)
        let ids = outbox.pending(.reports, limit: 10, maxBytes: 1 << 20).map { $0.file.lastPathComponent.split(separator: "-", maxSplits: 2).last.map(String.init) ?? "" }
        #expect(ids == [first.id, second.id, crash.id].map { "\($0).json" }, "on disk in the order they came, the crash's last")
        #expect(writer.count == 3)
    }

    /// Through the agent: a lock report handed over on one tick, a glitch with `test_crash` on
    /// the next — both are on disk when the crash handler runs.
    @MainActor @Test func whenTheAgentCrashesOnPurposeEveryEarlierReportIsOnDisk() throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("agent-\(UUID())")
        var config = WatchdogConfig()
        config.testCrash = true
        config.lockThresholdS = 0.5
        try AgentHarness.cacheConfig(config, in: storage)
        var onDisk: [Int] = []
        var harness: AgentHarness!
        harness = AgentHarness(storage: storage, offline: true) { $0.allowsTestCrash = true }
        harness.agent.beforeTestCrash = { _ in onDisk.append(harness.agent.outbox.count(.reports)) }
        harness.agent.locks.begin(flags: ["sending_overlay": true])
        harness.ticks(1)
        harness.watchMisplacedView()
        harness.ticks(2)
        #expect(harness.crashes.count == 1)
        #expect(onDisk == [2], "the lock report and the glitch's, before the crash")
    }
}
