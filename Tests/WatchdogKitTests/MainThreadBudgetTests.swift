import Foundation
import Testing
import WatchdogKit
import WatchdogWire

/// What a tick costs the main thread: nothing is looked at while the watchdog is off or the
/// scene is not in front, the interval has a floor, and the outbox is written elsewhere.
@MainActor @Suite struct MainThreadBudgetTests {
    /// The driver's walk over the view tree is the `observe` closure; the layout watchdog's is
    /// its `firstResponder`. Neither runs at a tick while the tester said no, the remote config
    /// is off, or the scene is inactive or in the background; a keyboard notification asks the
    /// windows for their first responder only while collecting and not in the background.
    @Test func noViewTreeWalkWhileDisabledOrNotInFront() throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("agent-\(UUID())")
        var off = WatchdogConfig()
        off.enabled = false
        try AgentHarness.cacheConfig(off, in: storage)
        let cases: [(String, AgentHarness, (AgentHarness) -> Void, routingAsks: Bool)] = [
            ("remote config off", AgentHarness(storage: storage, transport: RecordingTransport(config: #"{"enabled": false}"#)), { _ in }, false),
            ("tester said no", AgentHarness(), { $0.agent.isCollectionEnabled = false }, false),
            ("inactive", AgentHarness(), { $0.agent.setAppState(.inactive) }, true),
            ("background", AgentHarness(), { $0.agent.setAppState(.background) }, false),
            ("collecting, in front", AgentHarness(), { _ in }, true),
        ]
        for (name, harness, setUp, routingAsks) in cases {
            var observed = 0, responders = 0
            // Two windows: keyboard routing would ask both for their first responder.
            let main = harness.agent.attachScene(window: Frame(x: 0, y: 0, width: 390, height: 844))
            let other = harness.agent.attachScene(window: Frame(x: 0, y: 0, width: 390, height: 844))
            for scene in [main, other] { scene.layout.firstResponder = { responders += 1; return .none } }
            setUp(harness)
            harness.agent.keyboardEvent(KeyboardEvent(kind: .willShow, frameBegin: Frame(x: 0, y: 844, width: 390, height: 336),
                                                      frameEnd: Frame(x: 0, y: 508, width: 390, height: 336), animationDuration: 0, animationCurve: 7))
            #expect((responders > 0) == routingAsks, "\(name): routing asked \(responders) times")
            responders = 0
            for _ in 0..<3 {
                harness.clock.advance(1)
                harness.agent.tick(harness.agent.mainScene) { observed += 1; return .clear }
            }
            let judged = name == "collecting, in front"
            #expect((observed > 0) == judged, "\(name): observed \(observed)")
            #expect((responders > 0) == judged, "\(name): first responder asked \(responders) times at ticks")
        }
    }

    @Test func theTickIntervalHasAFloorWhateverTheServerSays() throws {
        for (remote, used) in [(0.1, WatchdogAgent.minimumTickInterval), (2.0, 2.0)] {
            let storage = FileManager.default.temporaryDirectory.appendingPathComponent("agent-\(UUID())")
            var config = WatchdogConfig()
            config.watchdogIntervalS = remote
            try AgentHarness.cacheConfig(config, in: storage)
            #expect(AgentHarness(storage: storage).agent.tickInterval == used)
        }
        #expect(WatchdogAgent.minimumTickInterval == 0.5)
    }
}
