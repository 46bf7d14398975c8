import Foundation
import GRDB
import Testing
import WatchdogTesting

/// The test-crash budget's bookkeeping under an ingest key (public: it ships in the app) that
/// posts test crashes for hundreds of thousands of installs (issue 13, point 2). It used to
/// re-read every one of today's `test_crash_daily` rows after each commit with a test crash, on
/// the writer's thread, so every app's ingest waited for it.
@Suite(.serialized, .enabled(if: TestStore.isSQLite, "writes the SQLite file; on PostgreSQL the budget reads the shared count")) struct TestCrashBudgetLoadTests {
    static func crash(app: String = "com.example.mail", install: String) throws -> [String: Any] {
        var report = try Fixtures.freshReport(app: app)
        report["install_id"] = install
        report["action"] = ["auto_fixed": false, "test_crash": true]
        return report
    }

    @Test func manyInstallsWithTestCrashesDoNotStallOtherAppsIngest() throws {
        let daemon = try Daemon()
        let attackerKey = try daemon.addApp("com.example.mail")
        let otherKey = try daemon.addApp("com.example.notes")
        let admin = try daemon.addToken(role: "admin")
        #expect(try daemon.client.request("PATCH", "/v1/admin/apps/com.example.mail/config", token: admin,
                                             body: Array(#"{"test_crash": true, "test_crash_budget": 2}"#.utf8)).status == 200)
        daemon.stop()
        // What 600 batches of 500 distinct install ids leave behind today: 300,000 rows,
        // written straight into the data dir (posting them takes minutes in a debug build).
        let today = Int64(Date().timeIntervalSince1970 * 1000) / 86_400_000
        let queue = try DatabaseQueue(path: daemon.dataDir.appendingPathComponent("watchdog.sqlite3").path)
        try queue.write { db in
            try db.execute(sql: """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000)
                INSERT INTO test_crash_daily (app, install_id, day, crashes) SELECT 'com.example.mail', 'flood-' || i, ?, 1 FROM n
                """, arguments: [today])
        }
        try queue.close()
        try daemon.restart()

        // The attacker posts test crashes for fresh installs while another app's client posts
        // ordinary reports; every post of the other app is timed.
        let stop = Locked(false)
        let attackerPosts = Locked<[Double]>([])
        let attackerStatuses = Locked<[Int]>([])
        let port = daemon.port
        let attackerDone = DispatchSemaphore(value: 0)
        // A thread of its own: on a busy 2-core runner the shared pool may not start a block
        // before the other app's 4 s are over, and the attack must overlap them. It posts at
        // least five times whatever the other loop does.
        let attackerThread = Thread {
            let client = HTTPClient(port: port)
            var index = 0
            while index < 5 || (!stop.value && index < 40) {
                let reports = (0..<50).compactMap { try? Self.crash(install: "attacker-\(index)-\($0)") }
                let started = Date()
                let status = (try? client.postJSON("/v1/reports", token: attackerKey, json: ["reports": reports]))?.status
                attackerPosts.update { $0.append(Date().timeIntervalSince(started)) }
                attackerStatuses.update { $0.append(status ?? 0) }
                index += 1
            }
            attackerDone.signal()
        }
        attackerThread.start()
        var other: [Double] = []
        let began = Date()
        // At least 4 s, and until the attacker has posted five times (at most 60 s).
        while Date().timeIntervalSince(began) < 4
                || (attackerPosts.value.count < 5 && Date().timeIntervalSince(began) < 60) {
            let started = Date()
            let answer = try daemon.client.postJSON("/v1/reports", token: otherKey, json: ["reports": [try Fixtures.freshReport(app: "com.example.notes")]])
            other.append(Date().timeIntervalSince(started))
            #expect(answer.status == 202)
        }
        stop.update { $0 = true }
        attackerDone.wait()
        let sorted = other.sorted()
        let attacker = attackerPosts.value.sorted()
        print("""
            test-crash budget: 300,000 installs with a test crash today; attacker \(attacker.count) posts of 50 test crashes, \
            p50 \(Int((attacker.isEmpty ? 0 : attacker[attacker.count / 2]) * 1000)) ms; other app \(other.count) posts in \(Int(Date().timeIntervalSince(began))) s, \
            p50 \(Int(sorted[sorted.count / 2] * 1000)) ms, worst \(Int((sorted.last ?? 0) * 1000)) ms
            """)
        #expect(Set(attackerStatuses.value) == [202], "attacker's posts: \(attackerStatuses.value)")
        // Acceptance of issue 13: a normal client is answered within 1 s while the attack runs.
        #expect((sorted.last ?? 0) < 1, "another app's post waited \(Int((sorted.last ?? 0) * 1000)) ms")

        // The budget still holds, for an install tracked in memory and for one past the bound.
        func testCrash(_ install: String) throws -> Bool? {
            try daemon.client.request("GET", "/v1/config?app=com.example.mail&install_id=\(install)", token: attackerKey).json["test_crash"] as? Bool
        }
        for install in ["crashy", "flood-7"] {
            if install == "crashy" {
                #expect(try testCrash(install) == true)
                #expect(try daemon.client.postJSON("/v1/reports", token: attackerKey, json: ["reports": [try Self.crash(install: install)]]).status == 202)
            }
            #expect(try testCrash(install) == true, "\(install): 1 of 2 used")
            #expect(try daemon.client.postJSON("/v1/reports", token: attackerKey, json: ["reports": [try Self.crash(install: install)]]).status == 202)
            #expect(try testCrash(install) == false, "\(install): budget used up")
        }
        // A repost is a duplicate: it uses no budget.
        let once = try Self.crash(install: "steady")
        for _ in 0..<3 { _ = try daemon.client.postJSON("/v1/reports", token: attackerKey, json: ["reports": [once]]) }
        #expect(try testCrash("steady") == true, "one test crash, posted three times, is one of 2")
    }
}
