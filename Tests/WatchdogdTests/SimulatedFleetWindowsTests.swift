import Foundation
import Testing
import WatchdogSimulation

/// The simulator's fleet against the real daemon (port 0, temp data dir) with the cases issue 40
/// was about: compose screens in a tab bar controller (the composer belongs above the tab bar
/// while the keyboard is down) and iPads running two windows of the app side by side (every
/// keyboard notification reaches both; the keyboard moves from one to the other). A false report
/// would show as more view_frame_mismatch reports than glitches injected; a missed glitch as fewer.
@Suite(.serialized) struct SimulatedFleetWindowsTests {
    @Test func tabBarComposersAndTwoWindowIPadsGetNoFalseReportAndEveryGlitchIsReported() async throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let viewer = try daemon.addToken(role: "viewer")
        var plan = FleetPlan.twoReleases(app: "com.example.mail", devices: 6, sessions: 180)
        plan.maximumBackoff = 0.5
        plan.tabBarProbability = 0.5
        plan.twoWindowProbability = 1
        plan.hardwareKeyboardProbability = 0.3
        plan.uploadEvery = 3
        let endpoint = try #require(URL(string: "http://127.0.0.1:\(daemon.port)"))
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID().uuidString)")
        let produced = try await Fleet.run(plan, endpoint: endpoint, ingestKey: key, workDirectory: work, deadline: Date().addingTimeInterval(120))

        #expect(produced.undelivered == 0)
        #expect(produced.devicesWithTwoWindows == 2, "the two iPads of six devices")
        #expect(produced.devicesWithTabBar > 0 && produced.devicesWithTabBar < 6)
        #expect(produced.expectedViewReports > 10)
        #expect(produced.reports == produced.expectedReports, "no false report, no glitch missed, per release")

        var kinds: [String: Int] = [:]
        var cursor: String?
        repeat {
            let page = try daemon.client.request("GET", "/v1/apps/com.example.mail/reports?limit=500" + (cursor.map { "&cursor=\($0)" } ?? ""), token: viewer).json
            for stored in page["reports"] as? [[String: Any]] ?? [] {
                kinds[(stored["report"] as? [String: Any])?["kind"] as? String ?? "?", default: 0] += 1
            }
            cursor = page["next_cursor"] as? String
        } while cursor != nil
        #expect(kinds["view_frame_mismatch"] == produced.expectedViewReports, "\(kinds)")
        #expect(kinds["interaction_lock"] == produced.totalExpectedReports - produced.expectedViewReports, "\(kinds)")
        #expect(kinds["keyboard_without_input"] == nil && kinds["input_covered_by_keyboard"] == nil, "\(kinds)")
    }
}
