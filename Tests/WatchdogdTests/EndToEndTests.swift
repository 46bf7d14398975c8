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
        #expect(produced.reports == produced.expectedReports, "no false glitch from Split View, app switches or window changes")

        let (sessions, reports) = try Self.countsPerRelease(daemon, viewer: viewer)
        #expect(sessions == produced.sessions)
        #expect(reports == produced.reports)
        #expect(try daemon.storedReportCount() == produced.totalReports)
    }

    /// The app's key is revoked a third of the way through and a new one issued at two thirds:
    /// meanwhile every upload gets 401 and the outboxes keep everything; with the new key all
    /// of it arrives — each session and report counted exactly once. iPads go through Split
    /// View with the other app's keyboard on the way, without a single false glitch.
    @Test func aFleetThroughAKeyRotationLosesNothingAndReportsNoFalseGlitch() async throws {
        let daemon = try Daemon()
        let admin = try daemon.addToken(role: "admin")
        let viewer = try daemon.addToken(role: "viewer")
        let created = try daemon.client.postJSON("/v1/admin/apps", token: admin, json: ["app": "com.example.mail"])
        let key = try #require(created.json["ingest_key"] as? String)
        let keyID = try #require(created.json["key_id"] as? String)
        var plan = FleetPlan.twoReleases(app: "com.example.mail", devices: 6, sessions: 300)
        plan.maximumBackoff = 0.5
        plan.lockProbability = 0.1
        plan.splitViewProbability = 0.5
        plan.uploadEvery = 2
        let endpoint = try #require(URL(string: "http://127.0.0.1:\(daemon.port)"))
        let port = daemon.port
        let rotation = KeyRotation(revokeAfter: 100, replaceAfter: 200, revoke: {
            let status = try HTTPClient(port: port).request("DELETE", "/v1/admin/apps/com.example.mail/keys/\(keyID)", token: admin).status
            #expect(status == 204)
        }, issue: {
            let issued = try HTTPClient(port: port).postJSON("/v1/admin/apps/com.example.mail/keys", token: admin, json: [:] as [String: String])
            return try #require(issued.json["ingest_key"] as? String)
        })
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID().uuidString)")
        let produced = try await Fleet.run(plan, endpoint: endpoint, ingestKey: key, workDirectory: work, deadline: Date().addingTimeInterval(90), keyRotation: rotation)

        #expect(produced.totalSessions == 300)
        #expect(produced.undelivered == 0)
        #expect(produced.devicesRefused == 6, "every device was refused while the key was revoked")
        #expect(produced.reports == produced.expectedReports, "no false glitch")
        #expect(produced.totalReports > 30)
        let (sessions, reports) = try Self.countsPerRelease(daemon, viewer: viewer)
        for release in try daemon.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer).json["releases"] as? [[String: Any]] ?? [] {
            #expect(release["client_evicted"] as? Int == 0 && release["client_quarantined"] as? Int == 0, "\(release["release"] ?? ""): nothing dropped")
        }
        #expect(sessions == produced.sessions)
        #expect(reports == produced.reports)
        #expect(try daemon.storedReportCount() == produced.totalReports)
    }

    /// Session starts and every stored report (headline, suspect and flooded) per release, from `/releases`.
    static func countsPerRelease(_ daemon: Daemon, viewer: String) throws -> (sessions: [String: Int], reports: [String: Int]) {
        var sessions: [String: Int] = [:], reports: [String: Int] = [:]
        for release in try daemon.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer).json["releases"] as? [[String: Any]] ?? [] {
            let name = release["release"] as? String ?? ""
            sessions[name] = release["sessions"] as? Int
            reports[name] = ["reports", "suspect_reports", "flooded_reports"].reduce(0) { $0 + (release[$1] as? Int ?? 0) }
        }
        return (sessions, reports)
    }
}
