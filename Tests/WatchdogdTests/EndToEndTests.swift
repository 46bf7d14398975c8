import Foundation
import Testing
import WatchdogSimulation

@Suite struct EndToEndTests {
    /// A thousand simulated sessions run WatchdogKit's real watchdogs, outboxes and uploaders
    /// against the daemon, which is killed with SIGKILL and restarted twice meanwhile.
    /// Afterwards the server's counts equal what the devices produced: nothing lost, nothing doubled.
    @Test func aFleetThroughTwoKillNineRestartsIsCountedExactly() async throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let viewer = try daemon.addToken(role: "viewer")
        var plan = FleetPlan.twoReleases(app: "com.example.mail", devices: 20, sessions: 1000)
        plan.sessionPause = 0.05
        plan.maximumBackoff = 0.5
        plan.lockProbability = 0.1
        let endpoint = try #require(URL(string: "http://127.0.0.1:\(daemon.port)"))
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID().uuidString)")

        let fleet = Task { try await Fleet.run(plan, endpoint: endpoint, ingestKey: key, workDirectory: work, deadline: Date().addingTimeInterval(90)) }
        var restarts = 0
        for _ in 0..<2 {
            try await Task.sleep(nanoseconds: 700_000_000)
            daemon.killHard()
            try await Task.sleep(nanoseconds: 300_000_000)
            try daemon.restart(samePort: true)
            restarts += 1
        }
        let produced = try await fleet.value
        #expect(restarts == 2)
        #expect(produced.totalSessions == 1000)
        #expect(produced.undelivered == 0)
        #expect(produced.totalReports > 100)

        let releases = try daemon.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer).json["releases"] as? [[String: Any]] ?? []
        var sessions: [String: Int] = [:]
        var reports: [String: Int] = [:]
        for release in releases {
            let name = release["release"] as? String ?? ""
            sessions[name] = release["sessions"] as? Int
            reports[name] = (release["reports"] as? Int ?? 0) + (release["suspect_reports"] as? Int ?? 0)
        }
        #expect(sessions == produced.sessions)
        #expect(reports == produced.reports)
        #expect(try daemon.storedReportCount() == produced.totalReports)
    }
}
