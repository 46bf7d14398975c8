import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import WatchdogKit
import WatchdogSimulation

@Suite struct EndToEndTests {
    /// A thousand simulated sessions run WatchdogKit's real watchdogs, outboxes and uploaders
    /// against the daemon, which is killed with SIGKILL and restarted twice while they upload.
    /// Each kill is shown to hit live traffic: uploads acknowledged since the previous restart,
    /// uploads in flight when it died (unanswered), and uploads acknowledged after the restart.
    /// Afterwards every acknowledged report is stored exactly once and the server's counts
    /// equal what the devices produced: nothing lost, nothing doubled.
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
        let log = TrafficLog()

        let started = Date()
        let fleet = Task {
            try await Fleet.run(plan, endpoint: endpoint, ingestKey: key, workDirectory: work, deadline: Date().addingTimeInterval(900),
                                transport: { _ in RecordingTransport(inner: URLSessionTransport(), log: log) })
        }
        var kills: [(previousRestart: Date, killed: Date, restarted: Date)] = []
        var previousRestart = started
        for _ in 0..<2 {
            // Once uploads were acknowledged since the last restart, freeze the daemon (SIGSTOP)
            // so that uploads sent from then on stay unanswered, and kill it when two of them
            // are waiting: the kill lands on requests in flight, not between them.
            // Generous: in the full parallel suite the fleet's tasks can wait minutes for a
            // thread before they upload anything (CI once saw none within 180 s). A bound on
            // failure, not a measure.
            let deadline = Date().addingTimeInterval(600)
            while Date() < deadline, log.acknowledged(from: previousRestart).count < 3 {
                try await Task.sleep(nanoseconds: 1_000_000)
            }
            kill(daemon.process.processIdentifier, SIGSTOP)
            let frozen = Date()
            while Date() < frozen.addingTimeInterval(60), log.inFlight(startedAfter: frozen) < 2 {
                try await Task.sleep(nanoseconds: 1_000_000)
            }
            let killed = Date()
            daemon.killHard()
            try await Task.sleep(nanoseconds: 300_000_000)
            try daemon.restart(samePort: true)
            kills.append((previousRestart, killed, Date()))
            previousRestart = Date()
        }
        let produced = try await fleet.value
        let uploads = log.all
        for (index, kill) in kills.enumerated() {
            let before = log.acknowledged(from: kill.previousRestart, to: kill.killed)
            let cutOff = uploads.filter { $0.started < kill.killed && $0.ended > kill.killed && !$0.acknowledged }
            let refused = uploads.filter { $0.started > kill.killed && $0.ended < kill.restarted && !$0.acknowledged }
            let after = log.acknowledged(from: kill.restarted)
            print("kill \(index + 1): \(before.count) uploads acknowledged since the last restart, \(cutOff.count) in flight when it died, \(refused.count) refused while down, \(after.count) acknowledged after the restart")
            #expect(!before.isEmpty, "kill \(index + 1): no upload acknowledged before it")
            #expect(!cutOff.isEmpty, "kill \(index + 1): no upload was in flight when the daemon died")
            #expect(!after.isEmpty, "kill \(index + 1): nothing acknowledged after the restart")
        }
        #expect(produced.totalSessions == 1000)
        #expect(produced.undelivered == 0)
        #expect(produced.totalReports > 100)
        #expect(produced.reports == produced.expectedReports, "no false glitch from Split View, app switches or window changes")

        let acknowledged = Set(uploads.flatMap(\.acknowledgedIDs))
        let stored = try daemon.exportedReportIDs(viewer: viewer)
        #expect(Set(stored).count == stored.count, "\(stored.count - Set(stored).count) reports stored twice")
        #expect(acknowledged.isSubset(of: Set(stored)), "\(acknowledged.subtracting(stored).count) acknowledged reports lost")
        #expect(stored.count == produced.totalReports)
        let (sessions, reports) = try Self.countsPerRelease(daemon, viewer: viewer)
        #expect(sessions == produced.sessions)
        #expect(reports == produced.reports)
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
        // Six simulated devices on 127.0.0.1: every release listed on sight (admission is IngestKeyAttackTests' subject).
        #expect(try daemon.runCommand(["apps", "admission", "com.example.mail", "--mode", "open"]).status == 0)
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
