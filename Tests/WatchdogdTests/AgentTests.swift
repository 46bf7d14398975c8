import Foundation
import GRDB
import Testing
import TestSupport
import WatchdogKit
import WatchdogWire

/// WatchdogKit's agent against the real daemon: remote switches, durable reports, kill switch.
@Suite struct AgentTests {
    @MainActor @Test func remoteSwitchesReachTheAgentAndTheKillSwitchStopsEverything() async throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let admin = try daemon.addToken(role: "admin")
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("agent-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: storage) }
        var settings = WatchdogSettings(endpoint: URL(string: "http://127.0.0.1:\(daemon.port)")!, ingestKey: key, app: "com.example.mail",
                                        release: Release(version: "14.2.0", build: "31245", channel: "beta"),
                                        device: Device(model: "iPhone15,2", os: "iOS", osVersion: "18.1", idiom: "phone"), idiom: .phone, storageDirectory: storage)
        settings.configRefreshInterval = 0
        // A tester's build: the only kind that may crash on purpose.
        settings.allowsTestCrash = true
        settings.host = HostApp(distribution: .testFlight)
        let clock = ManualClock(100)
        var crashes: [Bool] = []
        var agent: WatchdogAgent!
        agent = WatchdogAgent(settings: settings, window: Frame(x: 0, y: 0, width: 390, height: 844), clock: { clock.now },
                                  crashHandler: { _ in crashes.append(agent.outbox.count(.reports) == 1) })
        var offset = 36.0
        agent.layout.watch(WatchedView(name: "composeToolbar", expectedFrame: { Frame(x: 0, y: 584, width: 390, height: 44) },
                                       actualFrame: { Frame(x: 0, y: 584 + offset, width: 390, height: 44) }, autoFix: { offset = 0 }))
        agent.startSession()
        await agent.syncNow()
        #expect(agent.outbox.count(.sessions) == 0, "the session start was delivered")

        let patch = #"{"test_crash": true, "auto_fix": true}"#
        #expect(try daemon.client.request("PATCH", "/v1/admin/apps/com.example.mail/config", token: admin, body: Array(patch.utf8)).status == 200)
        await agent.syncNow()
        #expect(agent.config.current.testCrash && agent.config.current.autoFix)

        agent.keyboardEvent(KeyboardEvent(kind: .willShow, frameBegin: Frame(x: 0, y: 844, width: 390, height: 216),
                                          frameEnd: Frame(x: 0, y: 628, width: 390, height: 216), animationDuration: 0.25, animationCurve: 7))
        for _ in 0..<3 {
            clock.advance(1)
            agent.layout.tick()
        }
        #expect(crashes == [true], "crashed once, after the report was saved")
        #expect(offset == 0, "auto-fixed")
        await agent.syncNow()
        let viewer = try daemon.addToken(role: "viewer")
        let stored = try daemon.client.request("GET", "/v1/apps/com.example.mail/reports", token: viewer).json["reports"] as? [[String: Any]] ?? []
        #expect(stored.count == 1)
        let report = try JSONDecoder().decode(Report.self, from: JSONSerialization.data(withJSONObject: try #require(stored.first?["report"])))
        #expect(report.action == ClientAction(autoFixed: true, testCrash: true))
        #expect(report.sessionId != nil && report.installId != nil)
        #expect(report.id.dropFirst(14).first == "7" && report.sessionId?.dropFirst(14).first == "7", "time-ordered ids (UUID version 7)")

        #expect(try daemon.client.request("PATCH", "/v1/admin/apps/com.example.mail/config", token: admin, body: Array(#"{"enabled": false}"#.utf8)).status == 200)
        await agent.syncNow()
        #expect(agent.config.current.enabled == false)
        agent.startSession()
        offset = 50
        for _ in 0..<3 {
            clock.advance(1)
            agent.tick()
        }
        #expect(agent.outbox.count(.reports) + agent.outbox.count(.sessions) == 0, "disabled: no session, no report")

        // Offline, a new agent on the same storage starts from the cached config, not the defaults.
        settings.endpoint = URL(string: "http://127.0.0.1:1")!
        let offline = WatchdogAgent(settings: settings, window: Frame(x: 0, y: 0, width: 390, height: 844), clock: { clock.now }, crashHandler: { _ in })
        await offline.syncNow()
        #expect(offline.config.current == agent.config.current)
        #expect(offline.config.current.enabled == false)
        #expect(offline.config.current.autoFix == true)
        // The install used its daily test-crash budget (1) above, so the server turned it off.
        #expect(offline.config.current.testCrash == false)
    }
}
