import Foundation
import Testing
import Locking
import WatchdogTesting

@Suite struct RateLimitTests {
    /// The clock stands still while the test posts, so the bucket holds exactly its burst.
    @Test func aFloodFromOneKeyGets429WithRetryAfterAndOtherKeysAreServed() throws {
        let app = try TestApplication { $0.ingestRatePerKey = 5; $0.ingestBurstPerKey = 10 }
        let flooder = try app.addApp("com.example.mail")
        let neighbour = try app.addApp("com.example.notes")
        var statuses: [Int] = []
        var limited: TestResponse?
        for _ in 0..<20 {
            let response = try app.client.postJSON("/v1/reports", token: flooder, json: ["reports": [try Fixtures.freshReport()]])
            statuses.append(response.status)
            if response.status == 429 { limited = response }
        }
        #expect(statuses.filter { $0 == 202 }.count == 10, "the burst (2 × 5) goes through, nothing more")
        #expect(statuses.prefix(10).allSatisfy { $0 == 202 } && statuses.dropFirst(10).allSatisfy { $0 == 429 })
        let refused = try #require(limited, "past the burst: 429")
        #expect(refused.errorCode == "rate_limited")
        #expect(Int(refused.headers["retry-after"] ?? "") ?? 0 >= 1)
        #expect(try app.client.postJSON("/v1/reports", token: neighbour, json: ["reports": [try Fixtures.freshReport(app: "com.example.notes")]]).status == 202,
                "another key's bucket is its own")
        app.clock.advance(milliseconds: 200)
        #expect(try app.client.postJSON("/v1/reports", token: flooder, json: ["reports": [try Fixtures.freshReport()]]).status == 202, "refilled by one in 0.2 s")
        #expect(try app.client.postJSON("/v1/reports", token: flooder, json: ["reports": [try Fixtures.freshReport()]]).status == 429, "and by one only")
        #expect(try app.storedReportCount() == 10 + 2, "refused posts stored nothing")
    }

    @Test func oneAddressIsLimitedAcrossKeys() throws {
        let app = try TestApplication { $0.ingestRatePerAddress = 2; $0.ingestBurstPerAddress = 10 }
        let first = try app.addApp("com.example.mail")
        let second = try app.addApp("com.example.notes")
        var statuses: [Int] = []
        for index in 0..<16 {
            let (key, name) = index % 2 == 0 ? (first, "com.example.mail") : (second, "com.example.notes")
            statuses.append(try app.client.postJSON("/v1/reports", token: key, json: ["reports": [try Fixtures.freshReport(app: name)]]).status)
        }
        #expect(statuses == Array(repeating: 202, count: 10) + Array(repeating: 429, count: 6), "a burst of 5 × 2 across both keys, then nothing")
        app.clock.advance(milliseconds: 1_000)
        let after = try (0..<3).map { _ in try app.client.postJSON("/v1/reports", token: second, json: ["reports": [try Fixtures.freshReport(app: "com.example.notes")]]).status }
        #expect(after == [202, 202, 429], "2 a second")
    }

    /// The writer stalls for real (another connection holds SQLite's write lock): batches wait
    /// up to the queue's bound, the next one gets 503 with Retry-After instead of more memory,
    /// and once the lock is released everything waiting is committed and acknowledged.
    @Test(.enabled(if: TestStore.isSQLite, "stalls the writer with a SQLite lock")) func aStalledWriterFillsABoundedQueueThenAnswers503AndCatchesUp() throws {
        let app = try TestApplication { $0.ingestQueueCapacity = 100 }
        let key = try app.addApp("com.example.mail")
        #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": [try Fixtures.freshReport()]]).status == 202)

        // Another connection holds SQLite's write lock.
        let lock = try SQLiteWriteLock(path: try app.sqlite.path)
        // Does not depend on how the writer and the lock interleave: releases in any case.
        defer { lock.release() }

        // Small batches: the queue fills long before SQLite's busy timeout (10 s) gives up on the
        // lock, also in a ThreadSanitizer build, where decoding and compressing is ~10× slower.
        let batches: [[UInt8]] = try (0..<20).map { _ in
            Array(try JSONSerialization.data(withJSONObject: ["reports": try (0..<20).map { _ in try Fixtures.freshReport() }]))
        }
        let statuses = Locked<[Int: Int]>([:])
        let group = DispatchGroup()
        // A thread per post: each blocks until its batch is answered, and GCD's pool would add
        // threads for them only about once a second.
        let client = app.client
        func post(_ index: Int) {
            group.enter()
            Thread {
                let status = (try? client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: batches[index]).status) ?? -1
                statuses.withLock { $0[index] = status }
                group.leave()
            }.start()
        }
        func queueDepth() throws -> Int {
            try app.client.request("GET", "/metrics").text.split(separator: "\n")
                .first { $0.hasPrefix("watchdog_ingest_queue_depth ") }.flatMap { Double($0.split(separator: " ")[1]) }.map { Int($0) } ?? -1
        }
        // Batches of 20 until five wait in the queue (the writer holds the first ones it took
        // while it waits for the lock).
        var posted = 0
        while try queueDepth() < 100, posted < batches.count {
            let before = try queueDepth()
            post(posted)
            posted += 1
            let until = Date().addingTimeInterval(1)
            while try queueDepth() == before, Date() < until { usleep(5_000) }
        }
        #expect(try queueDepth() == 100, "the queue reached its bound of 100 items")
        let refused = try app.client.postJSON("/v1/reports", token: key, json: ["reports": [try Fixtures.freshReport()]])
        #expect(refused.status == 503 && refused.errorCode == "overloaded")
        #expect(refused.headers["retry-after"] == "1")
        let ready = try app.client.request("GET", "/readyz")
        #expect(ready.status == 503 && ready.errorCode == "overloaded", "not ready while the queue is (nearly) full")
        #expect(!statuses.withLock { $0.values.contains(202) }, "nothing acknowledged while the writer cannot commit")
        #expect(try queueDepth() <= 100, "memory stays bounded")

        lock.release()
        lock.waitUntilReleased()
        group.wait()
        let answered = statuses.withLock { $0 }
        #expect(answered.count == posted && answered.values.allSatisfy { $0 == 202 || $0 == 503 })
        let acknowledged = answered.values.filter { $0 == 202 }.count
        #expect(acknowledged >= 5, "the batches that waited are committed, then acknowledged")
        #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": [try Fixtures.freshReport()]]).status == 202, "caught up")
        #expect(try app.storedReportCount() == 1 + 20 * acknowledged + 1, "exactly what was acknowledged is stored")
    }
}
