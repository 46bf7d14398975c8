import Foundation
import Testing
import TestSupport
import WatchdogKit
import WatchdogWire

/// Sessions as Sentry's release health counts them, one session for several windows, the
/// driver's registrations made once and gone with it, and the flush when the app leaves.
@MainActor @Suite struct LifecycleTests {
    @Test func aNewSessionStartsAfterThirtySecondsInTheBackgroundNotAfterAShortTrip() throws {
        let harness = AgentHarness(offline: true)
        let left = harness.agent.attachScene(window: Frame(x: 0, y: 0, width: 597, height: 834))
        let right = harness.agent.attachScene(window: Frame(x: 597, y: 0, width: 597, height: 834))
        harness.agent.startSessionIfNeeded()
        harness.agent.startSessionIfNeeded()  // the second window's driver
        #expect(try harness.sessions().count == 1, "two windows, one session")

        func away(for seconds: Double, scenes: [WatchdogScene]) {
            for scene in scenes { harness.agent.setAppState(.inactive, for: scene) }
            for scene in scenes { harness.agent.setAppState(.background, for: scene) }
            harness.clock.advance(seconds)
            for scene in scenes { harness.agent.setAppState(.inactive, for: scene) }
            for scene in scenes { harness.agent.setAppState(.active, for: scene) }
        }
        away(for: 12, scenes: [left, right])
        #expect(try harness.sessions().count == 1, "a glance at a notification")
        away(for: 45, scenes: [left])
        #expect(try harness.sessions().count == 1, "one window away, the other still in front: the app never left")
        away(for: 31, scenes: [left, right])
        let sessions = try harness.sessions()
        #expect(sessions.count == 2, "back after 31 s: a new session")
        harness.ticks(1)
        harness.watchMisplacedView()
        harness.ticks(2)
        #expect(try harness.reports().map(\.sessionId) == [sessions.last?.id], "reports carry the new session")
    }

    /// The device slept while the app was in the background: the monotonic clock stood still,
    /// the time of day did not — a minute away is a new session.
    @Test func timeAsleepInTheBackgroundCountsForANewSession() throws {
        let monotonic = ManualClock(100), day = ManualClock(1_795_000_000)
        var settings = WatchdogSettings(endpoint: URL(string: "https://watchdog.example.com")!, ingestKey: "wdi_test", app: "com.example.mail",
                                        release: Release(version: "1", build: "1"), device: Device(idiom: "phone"), idiom: .phone,
                                        storageDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("agent-\(UUID())"))
        settings.host = HostApp(distribution: .testFlight)
        let agent = WatchdogAgent(settings: settings, clock: { monotonic.now }, wallClock: { Date(timeIntervalSince1970: day.now) },
                                  transport: OfflineTransport(), crashHandler: { _ in })
        agent.startSessionIfNeeded()
        agent.setAppState(.background)
        day.advance(60)
        agent.setAppState(.active)
        agent.flushWrites()
        #expect(agent.outbox.count(.sessions) == 2)
    }

    @Test func thePolicyCountsTheTimeInTheBackgroundOnly() {
        var policy = SessionPolicy()
        #expect(policy.appState(.inactive, at: 0) == false)
        #expect(policy.appState(.background, at: 1) == false)
        #expect(policy.appState(.background, at: 20) == false, "still the first background time")
        #expect(policy.appState(.inactive, at: 31) == false)
        #expect(policy.appState(.active, at: 40) == true)
        #expect(policy.appState(.active, at: 41) == false)
        #expect(policy.appState(.background, at: 50) == false)
        #expect(policy.appState(.active, at: 79.9) == false, "29.9 s")
    }

    /// The flush when the app goes to the background uploads, but never over a network in Low
    /// Data Mode; ordinary passes may.
    @Test func theBackgroundFlushUploadsButNotOverALowDataNetwork() async throws {
        let transport = RecordingTransport()
        let harness = AgentHarness(transport: transport)
        harness.agent.startSession()
        await harness.agent.syncNow()
        harness.watchMisplacedView()
        harness.ticks(3)
        let before = transport.requests.count
        await harness.agent.flushForBackground()
        let flushed = transport.requests.dropFirst(before)
        #expect(flushed.map(\.path) == ["/v1/reports"])
        #expect(flushed.allSatisfy { !$0.allowsConstrainedNetworkAccess })
        #expect(transport.requests.prefix(before).allSatisfy { $0.allowsConstrainedNetworkAccess })
        #expect(harness.agent.outbox.count(.reports) == 0)
    }

    @Test func theDriversRegistrationsAreMadeOnceAndGoWithIt() async throws {
        let center = NotificationCenter()
        let name = Notification.Name("tick")
        final class Count: @unchecked Sendable { var value = 0 }
        let heard = Count()
        var registrations: DriverRegistrations? = DriverRegistrations(center: center)
        for _ in 0..<2 {
            registrations?.start { center in [center.addObserver(forName: name, object: nil, queue: nil) { _ in heard.value += 1 }] }
        }
        center.post(name: name, object: nil)
        #expect(heard.value == 1, "start() twice observes once")
        let timer = Timer(timeInterval: 60, repeats: true) { _ in }
        RunLoop.main.add(timer, forMode: .common)
        registrations?.setTimer(timer)
        registrations = nil  // the driver went away without stop()
        center.post(name: name, object: nil)
        #expect(heard.value == 1, "no observer left behind")
        // Invalidated on the main thread, where a driver schedules its timer.
        await withCheckedContinuation { done in DispatchQueue.main.async { done.resume() } }
        #expect(!timer.isValid, "no timer left firing")
    }
}
