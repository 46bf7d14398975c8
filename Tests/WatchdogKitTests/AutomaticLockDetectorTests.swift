import Foundation
import Testing
import WatchdogKit
import WatchdogWire

/// The decision logic of automatic lock detection, fed scripted sequences of what the UIKit
/// driver observes at each tick (one tick per second, `lock_threshold_s` 3).
@Suite struct AutomaticLockDetectorTests {
    final class Harness {
        var now = 0.0
        let outbox: Outbox
        let detector: AutomaticLockDetector

        init() throws {
            outbox = try Outbox(directory: FileManager.default.temporaryDirectory.appendingPathComponent("wk-\(UUID())"))
            let context = ReportContext(app: "com.example.mail", release: Release(version: "14.2.0", build: "1"), device: Device(idiom: "phone"), installID: "I-1")
            var clock: () -> Double = { 0 }
            detector = AutomaticLockDetector(watchdog: InteractionLockWatchdog(context: context, sink: outbox, logger: TaggedLogger(tag: "keyboard"), clock: { clock() }))
            clock = { [unowned self] in now }
            detector.watchdog.config.lockThresholdS = 3
        }

        /// One tick per observation.
        func run(_ observations: [LockObservation]) {
            for observation in observations {
                now += 1
                detector.observe(observation)
                detector.tick()
            }
        }

        func reports() throws -> [Report] {
            try outbox.pending(.reports, limit: 100, maxBytes: 1 << 24).map { try JSONDecoder().decode(Report.self, from: $0.json) }
        }
    }

    static func push(_ id: Int) -> LockObservation { LockObservation(transition: .push, identity: id, screen: "InboxViewController") }

    @Test func aPushWhoseCoordinatorOutlivesTheThresholdIsReportedOnceWithItsFlags() throws {
        let harness = try Harness()
        harness.run([.clear] + Array(repeating: Self.push(1), count: 8) + [.clear])
        let reports = try harness.reports()
        #expect(reports.count == 1)
        let report = try #require(reports.first)
        #expect(report.kind == "interaction_lock")
        #expect(report.screen == "InboxViewController")
        #expect(report.lock?.flags == ["automatic": true, "push": true])
        #expect((report.lock?.durationS ?? 0) > 3)
    }

    @Test func transitionsThatFinishInTimeAreNotLocksEvenBackToBack() throws {
        let harness = try Harness()
        // Two ticks each, five different transitions in a row: never one lock held for 10 s.
        harness.run((1...5).flatMap { [Self.push($0), Self.push($0)] } + [.clear])
        #expect(try harness.reports().isEmpty)
    }

    @Test func aCancelledInteractivePopThatNeverCompletesIsReportedAsAnInteractivePop() throws {
        let harness = try Harness()
        let pop = LockObservation(transition: .pop, interactive: true, identity: 7, screen: "ThreadViewController")
        harness.run(Array(repeating: pop, count: 5))
        #expect(try harness.reports().first?.lock?.flags == ["automatic": true, "pop": true, "interactive": true])
    }

    @Test(arguments: [
        (LockObservation(transition: .presentation, identity: 3), ["automatic": true, "presentation": true]),
        (LockObservation(transition: .dismissal, identity: 3), ["automatic": true, "presentation": true, "dismissal": true]),
        (LockObservation(disabledView: .window, identity: 4), ["automatic": true, "disabled_view": true, "disabled_window": true]),
        (LockObservation(disabledView: .keyView, identity: 5), ["automatic": true, "disabled_view": true]),
    ])
    func everyKindOfLockIsReportedWithFlagsSayingWhich(_ observation: LockObservation, _ flags: [String: Bool]) throws {
        let harness = try Harness()
        harness.run(Array(repeating: observation, count: 5))
        let reports = try harness.reports()
        #expect(reports.count == 1)
        #expect(reports.first?.lock?.flags == flags)
    }

    @Test func timeInTheBackgroundDoesNotCountAndALockThatEndsFirstIsNotReported() throws {
        let harness = try Harness()
        harness.run([Self.push(1), Self.push(1)])
        harness.detector.watchdog.appState = .background
        harness.run(Array(repeating: Self.push(1), count: 10))
        #expect(try harness.reports().isEmpty, "2 s active, the rest in the background")
        harness.detector.watchdog.appState = .active
        harness.run([.clear, Self.push(2), Self.push(2), .clear])
        #expect(try harness.reports().isEmpty)
    }

    @Test func theHostsManualLocksStayWatchedBesideTheAutomaticOnes() throws {
        let harness = try Harness()
        let manual = InteractionLockWatchdog(context: harness.detector.watchdog.context, sink: harness.outbox, logger: TaggedLogger(tag: "keyboard"), clock: { [unowned harness] in harness.now })
        manual.config.lockThresholdS = 3
        manual.begin(flags: ["custom_sheet": true])
        for _ in 0..<5 {
            harness.run([.clear])
            manual.tick()
        }
        #expect(try harness.reports().map { $0.lock?.flags } == [["custom_sheet": true]])
    }
}
