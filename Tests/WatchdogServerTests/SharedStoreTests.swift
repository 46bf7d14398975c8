import Foundation
import Locking
import Testing
import WatchdogTesting

/// Two nodes on one PostgreSQL store (`WATCHDOG_TEST_STORE=postgres`): what one node does, the
/// other sees — config within a second, revocations, the test-crash budget — and concurrent
/// writers on both count every report exactly once.
@Suite(.enabled(if: !TestStore.isSQLite, "needs a store shared by several nodes (PostgreSQL)"))
struct SharedStoreTests {
    static let app = "com.example.mail"

    /// Node A and node B, the same store, separate memory.
    static func cluster() throws -> (a: TestApplication, b: TestApplication, key: String, admin: String, viewer: String) {
        let a = try TestApplication()
        let key = try a.addApp(app)
        let admin = try a.addToken(role: "admin")
        let viewer = try a.addToken(role: "viewer")
        let b = try TestApplication(sharing: a)
        return (a, b, key, admin, viewer)
    }

    @Test func aConfigChangeOnOneNodeIsServedByTheOtherWithinASecond() throws {
        let (a, b, key, admin, _) = try Self.cluster()
        defer { try? a.stop(); try? b.stop() }
        let path = "/v1/config?app=\(Self.app)&install_id=i-1"
        #expect(try b.client.request("GET", path, token: key).json["auto_fix"] as? Bool == false)
        for round in 0..<3 {
            let on = round % 2 == 0
            let patch = try a.client.request("PATCH", "/v1/admin/apps/\(Self.app)/config", token: admin, body: Array(#"{"auto_fix": \#(on)}"#.utf8))
            #expect(patch.status == 200, "\(patch.text)")
            let saved = Date()
            var seen: Bool?
            while Date().timeIntervalSince(saved) < 3 {
                seen = try b.client.request("GET", path, token: key).json["auto_fix"] as? Bool
                if seen == on { break }
                usleep(20_000)
            }
            let waited = Date().timeIntervalSince(saved)
            print("shared store: config change \(round + 1) served by the other node after \(Int(waited * 1000)) ms")
            #expect(seen == on)
            #expect(waited < 1, "node B served the old config for \(Int(waited * 1000)) ms")
        }
        // A change based on a version the other node has moved past is refused, then succeeds
        // once re-read; neither node loses a change.
        let both = try b.client.request("PATCH", "/v1/admin/apps/\(Self.app)/config", token: admin, body: Array(#"{"lock_threshold_s": 12}"#.utf8))
        #expect(both.status == 200, "\(both.text)")
        let history = try a.client.request("GET", "/v1/admin/apps/\(Self.app)/config/history", token: admin)
        #expect((history.json["history"] as? [[String: Any]])?.count == 4, "\(history.text)")
    }

    @Test func aRevocationOnOneNodeIsRefusedByTheOtherWithinASecond() throws {
        let (a, b, key, admin, viewer) = try Self.cluster()
        defer { try? a.stop(); try? b.stop() }
        #expect(try b.client.request("GET", "/v1/apps", token: viewer).status == 200)
        // `watchdogd tokens revoke` writes to the store from a process of its own.
        let id = String(viewer.split(separator: "_")[1])
        #expect(try a.store.revokeCredentials(id: id, name: nil, atMilliseconds: a.clock.now) == 1)
        // Node B re-checks a verified token after a second of its clock (the same bound as
        // on one node).
        b.clock.advance(milliseconds: 1_001)
        #expect(try b.client.request("GET", "/v1/apps", token: viewer).status == 401)
        _ = (key, admin)
    }

    @Test func theTestCrashBudgetCountsCrashesReportedToEveryNode() throws {
        let (a, b, key, admin, _) = try Self.cluster()
        defer { try? a.stop(); try? b.stop() }
        #expect(try a.client.request("PATCH", "/v1/admin/apps/\(Self.app)/config", token: admin,
                                     body: Array(#"{"test_crash": true, "test_crash_budget": 2}"#.utf8)).status == 200)
        func crash(_ node: TestApplication) throws {
            var report = try Fixtures.freshReport(app: Self.app)
            report["install_id"] = "i-budget"
            report["action"] = ["auto_fixed": false, "test_crash": true]
            #expect(try node.client.postJSON("/v1/reports", token: key, json: ["reports": [report]]).status == 202)
        }
        func testCrash(_ node: TestApplication) throws -> Bool? {
            try node.client.request("GET", "/v1/config?app=\(Self.app)&install_id=i-budget", token: key).json["test_crash"] as? Bool
        }
        // Wait until node B has the config with test_crash on.
        let began = Date()
        while try testCrash(b) != true, Date().timeIntervalSince(began) < 3 { usleep(20_000) }
        try crash(a)
        #expect(try testCrash(b) == true, "1 of 2 used")
        try crash(b)
        #expect(try testCrash(a) == false, "both crashes count on node A, one of them posted to node B")
        #expect(try testCrash(b) == false)
    }

    @Test func concurrentWritersOnBothNodesStoreEachReportOnceAndCountItOnce() throws {
        let (a, b, key, _, viewer) = try Self.cluster()
        defer { try? a.stop(); try? b.stop() }
        // 8 writers (4 per node) post 25 batches of 20 reports each, in 10 shared sessions and 4
        // releases; every batch also goes to the other node once (a client retrying elsewhere).
        let sessions = (0..<10).map { "S-shared-\($0)" }
        let failures = Locked<[String]>([])
        let accepted = Locked(0)
        let duplicates = Locked(0)
        let clients = (a: a.client, b: b.client)
        DispatchQueue.concurrentPerform(iterations: 8) { writer in
            let (node, other) = writer % 2 == 0 ? (clients.a, clients.b) : (clients.b, clients.a)
            for round in 0..<25 {
                do {
                    let reports = try (0..<20).map { item -> [String: Any] in
                        try Fixtures.freshReport(app: Self.app, version: "14.\(item % 4).0", sessionID: sessions[(writer + round + item) % sessions.count])
                    }
                    for target in [node, other] {
                        let answer = try target.postJSON("/v1/reports", token: key, json: ["reports": reports])
                        guard answer.status == 202 else {
                            failures.withLock { $0.append("\(answer.status) \(answer.text.prefix(200))") }
                            continue
                        }
                        accepted.withLock { $0 += answer.json["accepted"] as? Int ?? 0 }
                        duplicates.withLock { $0 += answer.json["duplicates"] as? Int ?? 0 }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(accepted.withLock { $0 } == 8 * 25 * 20)
        #expect(duplicates.withLock { $0 } == 8 * 25 * 20)
        #expect(try a.storedReportCount() == 4_000)
        // The roll-ups of each release equal its raw rows, on both nodes.
        for node in [a, b] {
            let releases = try #require(try node.client.request("GET", "/v1/apps/\(Self.app)/releases", token: viewer).json["releases"] as? [[String: Any]])
            #expect(releases.count == 4)
            var stored: [String: Int] = [:]
            for report in try node.storedReports() { stored["\(report.release.version) (\(report.release.build))", default: 0] += 1 }
            for release in releases {
                let name = release["release"] as? String ?? ""
                let counted = (release["reports"] as? Int ?? 0) + (release["flooded_reports"] as? Int ?? 0)
                #expect(counted == stored[name], "\(name): roll-up \(counted), raw rows \(stored[name] ?? 0)")
                #expect(counted == 1_000)
            }
        }
    }
}
