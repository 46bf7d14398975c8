import Foundation
import PostgresClient
import Testing
import WatchdogKit
import WatchdogSimulation
import WatchdogTesting
#if canImport(Glibc)
import Glibc
#endif

/// The cluster of `deploy/cluster` as its script starts it — PostgreSQL, three `watchdogd` and
/// nginx — under a simulated fleet, with one node killed (SIGKILL) mid-load and restarted.
/// Runs when `WATCHDOG_TEST_STORE=postgres` (it starts its own PostgreSQL) and nginx is there.
@Suite(.enabled(if: !TestStore.isSQLite && FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx"), "needs PostgreSQL and nginx"))
struct ClusterTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// What `deploy/cluster/start.sh` printed, and how to stop it.
    final class Cluster {
        let directory: URL
        let url: URL
        let nodePorts: [UInt16]
        let store: String

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("watchdog-cluster-\(UUID().uuidString.prefix(8))")
            // Ports of their own, so the suite can run beside anything else on 8180–8183 — below
            // Linux's ephemeral range (32768–60999): a port there can be taken meanwhile by any
            // outgoing connection, as a node's own PostgreSQL connection once took nginx's.
            let base = UInt16.random(in: 20_000...32_000)
            var environment = ProcessInfo.processInfo.environment
            environment["WATCHDOGD"] = Daemon.binary.path
            environment["CLUSTER_PORT"] = String(base)
            environment["NODE_PORTS"] = "\(base + 1) \(base + 2) \(base + 3)"
            environment["PG_PORT"] = String(base + 4)
            // The fleet posts from one address, far faster than devices do.
            environment["NODE_ARGS"] = "--rate-per-address 0 --rate-per-key 0"
            let started: (stdout: String, stderr: String)
            do {
                started = try Self.script("start.sh", [directory.path], environment: environment)
            } catch {
                // What it started before failing (PostgreSQL, nodes) is stopped, not left running.
                _ = try? Self.script("stop.sh", [directory.path])
                throw error
            }
            var values: [String: String] = [:]
            for line in started.stdout.split(separator: "\n") {
                let pair = line.split(separator: "=", maxSplits: 1)
                if pair.count == 2 { values[String(pair[0])] = String(pair[1]) }
            }
            url = URL(string: values["CLUSTER_URL"] ?? "")!
            nodePorts = (values["NODE_URLS"] ?? "").split(separator: " ").compactMap { UInt16($0.split(separator: ":").last ?? "") }
            store = values["WATCHDOG_STORE"] ?? ""
        }

        deinit {
            _ = try? Self.script("stop.sh", [directory.path])
        }

        /// Runs a script of deploy/cluster with its output in files, not pipes: the processes it
        /// leaves running would hold a pipe open (and a reader waiting for its end) for ever.
        static func script(_ name: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (stdout: String, stderr: String) {
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("cluster-script-\(UUID().uuidString)")
            _ = FileManager.default.createFile(atPath: output.path + ".out", contents: nil)
            _ = FileManager.default.createFile(atPath: output.path + ".err", contents: nil)
            defer {
                try? FileManager.default.removeItem(atPath: output.path + ".out")
                try? FileManager.default.removeItem(atPath: output.path + ".err")
            }
            let process = Process()
            process.executableURL = ClusterTests.repository.appendingPathComponent("deploy/cluster/\(name)")
            process.arguments = arguments
            if let environment { process.environment = environment }
            process.standardOutput = FileHandle(forWritingAtPath: output.path + ".out")
            process.standardError = FileHandle(forWritingAtPath: output.path + ".err")
            try process.run()
            let deadline = Date().addingTimeInterval(180)
            while process.isRunning, Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            let stdout = (try? String(contentsOfFile: output.path + ".out", encoding: .utf8)) ?? ""
            let stderr = (try? String(contentsOfFile: output.path + ".err", encoding: .utf8)) ?? ""
            guard process.terminationReason == .exit, process.terminationStatus == 0 else {
                throw HTTPClientError(description: "deploy/cluster/\(name) failed (\(process.terminationStatus)): \(stderr.suffix(2000))")
            }
            return (stdout, stderr)
        }

        var client: HTTPClient { HTTPClient(port: UInt16(url.port ?? 0)) }

        func node(_ index: Int) -> HTTPClient { HTTPClient(port: nodePorts[index]) }

        /// A `watchdogd` verb on the cluster's store; its stdout.
        func command(_ arguments: [String]) throws -> String {
            let result = try ChildProcess.run(Daemon.binary, arguments + ["--store", store], seconds: Daemon.commandSeconds)
            guard result.status == 0 else { throw HTTPClientError(description: "watchdogd \(arguments.joined(separator: " ")): \(result.stderr)") }
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        func killNode(_ index: Int) throws {
            let pid = try String(contentsOf: directory.appendingPathComponent("node-\(nodePorts[index]).pid"), encoding: .utf8)
            kill(pid_t(pid.trimmingCharacters(in: .whitespacesAndNewlines))!, SIGKILL)
        }

        func restartNode(_ index: Int) throws {
            _ = try Self.script("start-node.sh", [directory.path, String(nodePorts[index])])
        }
    }

    @Test func aFleetThroughNginxLosesNothingWhenANodeIsKilledAndConfigReachesEveryNodeWithinASecond() async throws {
        let cluster = try Cluster()
        #expect(cluster.nodePorts.count == 3)
        let key = try cluster.command(["apps", "add", "com.example.mail", "--admission", "open"])
        let viewer = try cluster.command(["tokens", "add", "--role", "viewer", "fleet-check"])
        let admin = try cluster.command(["tokens", "add", "--role", "admin", "ops"])

        var plan = FleetPlan.twoReleases(app: "com.example.mail", devices: 20, sessions: 600)
        plan.sessionPause = 0.05
        plan.maximumBackoff = 0.5
        plan.lockProbability = 0.1
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("cluster-fleet-\(UUID().uuidString)")
        let log = TrafficLog()
        let started = Date()
        let endpoint = cluster.url
        let fleet = Task {
            try await Fleet.run(plan, endpoint: endpoint, ingestKey: key, workDirectory: work, deadline: Date().addingTimeInterval(300),
                                transport: { _ in RecordingTransport(inner: URLSessionTransport(), log: log) })
        }

        // Mid-load: node 2 dies (SIGKILL) while uploads are in flight through nginx.
        let deadline = Date().addingTimeInterval(180)
        while Date() < deadline, log.acknowledged(from: started).count < 20 { try await Task.sleep(nanoseconds: 2_000_000) }
        while Date() < deadline, log.inFlight() < 1 { try await Task.sleep(nanoseconds: 200_000) }
        let inFlightAtKill = log.inFlight()
        let killed = Date()
        try cluster.killNode(1)

        // Meanwhile a config change on node 1 is served by node 3 within a second.
        let patch = try cluster.node(0).request("PATCH", "/v1/admin/apps/com.example.mail/config", token: admin, body: Array(#"{"auto_fix": true}"#.utf8))
        #expect(patch.status == 200, "\(patch.text)")
        let saved = Date()
        var autoFix: Bool?
        while Date().timeIntervalSince(saved) < 3, autoFix != true {
            autoFix = try cluster.node(2).request("GET", "/v1/config?app=com.example.mail&install_id=i-1", token: key).json["auto_fix"] as? Bool
            if autoFix != true { try await Task.sleep(nanoseconds: 10_000_000) }
        }
        let configDelay = Date().timeIntervalSince(saved)
        #expect(autoFix == true)
        #expect(configDelay < 1, "node 3 served the old config for \(Int(configDelay * 1000)) ms")

        try await Task.sleep(nanoseconds: 1_000_000_000)
        try cluster.restartNode(1)
        let restarted = Date()
        let produced = try await fleet.value

        let uploads = log.all
        let failed = uploads.filter { ($0.status ?? 0) >= 500 }
        let retriedLater = failed.allSatisfy { failure in
            uploads.contains { $0.acknowledged && $0.started > failure.started && Set($0.reportIDs).isSuperset(of: failure.reportIDs) }
        }
        print("""
            cluster: \(uploads.count) uploads through nginx, \(uploads.filter { $0.acknowledged }.count) acknowledged; \
            \(inFlightAtKill) in flight when node 2 was killed, \(uploads.filter { $0.started < killed && $0.ended > killed }.count) spanning the kill, \
            \(log.acknowledged(from: restarted).count) acknowledged after its restart; \(failed.count) answered 5xx; \
            config change served by node 3 after \(Int(configDelay * 1000)) ms
            """)
        #expect(produced.undelivered == 0)
        #expect(produced.totalSessions == 600)
        #expect(retriedLater, "a 5xx whose reports were never acknowledged later")

        // Every acknowledged report is stored exactly once.
        let acknowledged = Set(uploads.flatMap(\.acknowledgedIDs))
        let export = try cluster.client.request("GET", "/v1/apps/com.example.mail/reports.ndjson", token: viewer)
        #expect(export.status == 200)
        let stored = export.dechunked.split(separator: UInt8(ascii: "\n")).map { line in
            ((try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any])?["id"] as? String ?? "<unreadable line>"
        }
        #expect(Set(stored).count == stored.count, "\(stored.count - Set(stored).count) reports stored twice")
        #expect(acknowledged.isSubset(of: Set(stored)), "\(acknowledged.subtracting(stored).count) acknowledged reports lost")
        #expect(stored.count == produced.totalReports)

        // A batch whose answer was lost, posted again to another node, and one posted to two
        // nodes at the same moment: each report stored once.
        let notes = try cluster.command(["apps", "add", "com.example.notes", "--admission", "open"])
        let batch = { try (0..<50).map { _ in try Fixtures.freshReport(app: "com.example.notes") } }
        let lost = try batch()
        #expect(try cluster.node(0).postJSON("/v1/reports", token: notes, json: ["reports": lost]).json["accepted"] as? Int == 50)
        #expect(try cluster.client.postJSON("/v1/reports", token: notes, json: ["reports": lost]).json["duplicates"] as? Int == 50)
        let twice = Array(try JSONSerialization.data(withJSONObject: ["reports": try batch()]))
        let accepted = Locked(0)
        let nodes = [cluster.node(0), cluster.node(2)]
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let answer = try? nodes[index].request("POST", "/v1/reports", token: notes, headers: ["Content-Type": "application/json"], body: twice)
            accepted.update { $0 += answer?.json["accepted"] as? Int ?? -1000 }
        }
        #expect(accepted.value == 50, "a batch posted to two nodes at once was accepted \(accepted.value) times in all")
        let notesStored = try cluster.client.request("GET", "/v1/apps/com.example.notes/reports.ndjson", token: viewer)
        #expect(notesStored.dechunked.split(separator: UInt8(ascii: "\n")).count == 100)

        // The release counts equal a count(*) over the raw rows, and what the fleet produced.
        let connection = try PostgresConnection(url: cluster.store)
        var raw: [String: Int] = [:]
        for row in try connection.query("SELECT version || ' (' || build || ')', count(*) FROM reports WHERE app = 'com.example.mail' GROUP BY 1") {
            raw[row.text(0)] = row.int(1)
        }
        var counted: [String: Int] = [:], sessions: [String: Int] = [:]
        for release in try cluster.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer).json["releases"] as? [[String: Any]] ?? [] {
            let name = release["release"] as? String ?? ""
            counted[name] = ["reports", "suspect_reports", "flooded_reports"].reduce(0) { $0 + (release[$1] as? Int ?? 0) }
            sessions[name] = release["sessions"] as? Int
        }
        #expect(counted == raw)
        #expect(counted == produced.reports)
        #expect(sessions == produced.sessions)
    }
}
