import Foundation
import Locking
import PostgresClient
import Testing
import WatchdogTesting

/// On PostgreSQL no request that may wait for the database runs on an HTTP worker (issue 45):
/// with every worker's worth of dashboard reads stuck on a lock in the database, `/healthz` and
/// `/readyz` are still answered — before any of the stuck reads — instead of queueing behind
/// them. The reads are stuck for real: a transaction of the test's holds the tables they read.
@Suite(.enabled(if: !TestStore.isSQLite, "the reads run on the HTTP workers on SQLite (a local file)"))
struct ProbeIsolationTests {
    @Test func theProbesAreAnsweredWhileEveryHTTPWorkerWouldBeWaitingForTheDatabase() throws {
        let daemon = try Daemon(extraArguments: ["--http-threads", "2"])
        defer { _ = daemon.stop() }
        _ = try daemon.addApp("com.example.mail")
        let viewer = try daemon.addToken(role: "viewer")
        #expect(try daemon.client.request("GET", "/v1/apps", token: viewer).status == 200)

        let url = try #require(try TestStore.postgresURL(directory: daemon.dataDir))
        let holder = try PostgresConnection(url: url, deadlines: PostgresDeadlines(statementMilliseconds: 0, idleInTransactionMilliseconds: 0))
        try holder.execute("BEGIN; LOCK TABLE apps, releases IN ACCESS EXCLUSIVE MODE")
        // Three reads per HTTP worker, each stuck on the lock (until the daemon's statement
        // timeout gives up on it).
        let finished = Locked<[(Date, Int)]>([])
        let group = DispatchGroup()
        let client = daemon.client
        for _ in 0..<6 {
            DispatchQueue.global().async(group: group) {
                let status = (try? client.request("GET", "/v1/apps", token: viewer).status) ?? 0
                finished.withLock { $0.append((Date(), status)) }
            }
        }
        let observer = try PostgresConnection(url: url)
        var waiting = 0
        for _ in 0..<200 where waiting < 2 {
            waiting = try observer.query("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()").first?.int(0) ?? 0
            usleep(20_000)
        }
        #expect(waiting >= 2, "the reads are waiting for the lock")

        let health = try daemon.client.request("GET", "/healthz")
        let ready = try daemon.client.request("GET", "/readyz")
        let answered = Date()
        let before = finished.withLock { $0 }
        try holder.execute("ROLLBACK")
        group.wait()
        #expect(health.status == 200)
        #expect([200, 503].contains(ready.status), "\(ready.text)")
        #expect(before.isEmpty, "stuck reads finished before the probes were answered: \(before)")
        let first = finished.withLock { $0.map(\.0).min() }
        #expect(first.map { answered <= $0 } == true, "the probes were answered after a stuck read")
        print("probe isolation: \(waiting) reads waiting on the lock; the probes answered \(first.map { String(format: "%.2f", $0.timeIntervalSince(answered)) } ?? "?") s before the first of them")
    }
}
