import Foundation
import Testing
import WatchdogTesting

@Suite(.enabled(if: TestStore.isSQLite, "backs up the SQLite file")) struct BackupTests {
    /// Two clients post batches one after another while `watchdogd backup` runs. Posts are
    /// acknowledged before, during and after the backup; the backup holds, for each client, a
    /// prefix of its batches — everything acknowledged before the backup began, nothing posted
    /// after it ended, no batch torn — with roll-ups that agree with its rows; the live database
    /// holds every acknowledged report once; the restored copy serves with the same credentials.
    @Test func anOnlineBackupTakenWhileClientsPostIsACommittedPrefixAndRestoresIntoAWorkingServer() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let viewer = try daemon.addToken(role: "viewer")
        let posters = try (0..<2).map { _ in try Poster(port: daemon.port, key: key) }
        posters.forEach { $0.start() }
        defer { posters.forEach { $0.stop() } }
        try Poster.wait("20 acknowledged posts per client before the backup") { posters.allSatisfy { $0.acknowledged(from: .distantPast).count >= 20 } }

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("backup-\(UUID().uuidString).sqlite3")
        defer { try? FileManager.default.removeItem(at: file) }
        let backupStarted = Date()
        let backup = try daemon.runCommand(["backup", "--to", file.path])
        let backupEnded = Date()
        try Poster.wait("20 posts per client acknowledged after the backup") { posters.allSatisfy { $0.acknowledged(from: backupEnded).count >= 20 } }
        posters.forEach { $0.stop() }
        #expect(backup.status == 0)
        #expect(backup.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == file.path)
        #expect(try daemon.runCommand(["backup", "--to", file.path]).status != 0, "does not overwrite without --force")

        let posts = posters.flatMap(\.posts)
        #expect(posts.allSatisfy { $0.status == 202 }, "every post acknowledged: \(Set(posts.map(\.status)))")
        #expect(posts.contains { $0.started < backupEnded && $0.ended > backupStarted && $0.status == 202 }, "a post acknowledged while the backup ran")

        // The live database: every acknowledged report, once.
        let live = try daemon.exportedReportIDs(viewer: viewer)
        #expect(Set(live).count == live.count, "a report stored twice")
        #expect(Set(posts.filter { $0.status == 202 }.flatMap(\.ids)) == Set(live), "the live database holds exactly the acknowledged reports")

        #expect(try daemon.runCommand(["restore", "--from", file.path]).status != 0, "refused while serve runs")
        let restored = try Daemon(dataDir: FileManager.default.temporaryDirectory.appendingPathComponent("restored-\(UUID().uuidString)"), startServing: false)
        defer { try? FileManager.default.removeItem(at: restored.dataDir) }
        #expect(try restored.runCommand(["restore", "--from", file.path]).status == 0)
        try restored.restart()
        let copy = Set(try restored.exportedReportIDs(viewer: viewer))

        for (client, poster) in posters.enumerated() {
            // Batches are posted one after another, so commit order is posting order.
            let present = poster.posts.map { post in post.ids.filter(copy.contains).count }
            #expect(!zip(present, poster.posts).contains { $0 != 0 && $0 != $1.ids.count }, "client \(client): a batch torn in the backup")
            let prefix = present.prefix { $0 > 0 }.count
            #expect(present.dropFirst(prefix).allSatisfy { $0 == 0 }, "client \(client): the backup is not a prefix of what was committed")
            let acknowledgedBefore = poster.posts.filter { $0.ended < backupStarted }.count
            #expect(prefix >= acknowledgedBefore, "client \(client): \(acknowledgedBefore - prefix) batches acknowledged before the backup began are missing from it")
            let postedAfter = poster.posts.firstIndex { $0.started > backupEnded } ?? poster.posts.count
            #expect(prefix <= postedAfter, "client \(client): batches posted after the backup ended are in it")
        }
        let during = posts.filter { $0.started < backupEnded && $0.ended > backupStarted }.count
        print("backup: \(posts.filter { $0.ended < backupStarted }.count) posts acknowledged before it began, \(during) while it ran, "
              + "\(posts.filter { $0.started > backupEnded }.count) after; the copy holds \(copy.count) of \(live.count) reports")
        let stats = try restored.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer)
        let release = try #require((stats.json["releases"] as? [[String: Any]])?.first)
        #expect((release["reports"] as? Int ?? 0) + (release["suspect_reports"] as? Int ?? 0) + (release["flooded_reports"] as? Int ?? 0) == copy.count,
                "one consistent snapshot: roll-ups agree with rows")
        let first = try #require(posters.first?.posts.first)
        let again = try restored.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: first.body)
        #expect(again.json["duplicates"] as? Int == first.ids.count, "credentials and data came back")
    }
}

/// A client posting batches of five fresh reports one after another, on a thread of its own,
/// writing down every post: its ids, when it started and ended, and the answer.
/// (`@unchecked`: `template` is a `[String: Any]`, never changed after `init`.)
final class Poster: @unchecked Sendable {
    struct Post: Sendable {
        var ids: [String]
        var body: [UInt8]
        var started: Date
        var ended: Date
        var status: Int
    }

    private let client: HTTPClient
    private let key: String
    /// A valid report; each post sends copies with fresh ids, each in a session of its own.
    private let template: [String: Any]
    private let log = Locked<[Post]>([])
    private let stopped = Locked(false)
    private let finished = DispatchSemaphore(value: 0)

    init(port: UInt16, key: String) throws {
        client = HTTPClient(port: port, timeoutSeconds: 10)
        self.key = key
        template = try Fixtures.freshReport()
    }

    var posts: [Post] { log.value }

    func acknowledged(from start: Date) -> [Post] {
        posts.filter { $0.status == 202 && $0.started >= start }
    }

    func start() {
        Thread.detachNewThread { [self] in
            // At most 5,000 posts: a bound should the test never call stop().
            for _ in 0..<5_000 where !stopped.value {
                let reports = (0..<5).map { _ in
                    var report = template
                    report["id"] = UUID().uuidString.lowercased()
                    report["session_id"] = "S-\(UUID().uuidString.lowercased())"
                    return report
                }
                let ids = reports.compactMap { $0["id"] as? String }
                let body = Array((try? JSONSerialization.data(withJSONObject: ["reports": reports])) ?? Data())
                let started = Date()
                let status = (try? client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: body).status) ?? 0
                log.update { $0.append(Post(ids: ids, body: body, started: started, ended: Date(), status: status)) }
            }
            finished.signal()
        }
    }

    /// Stops after the post under way (at most 10 s, the client's timeout).
    func stop() {
        guard !stopped.value else { return }
        stopped.update { $0 = true }
        _ = finished.wait(timeout: .now() + 15)
    }

    /// Waits up to 60 s for `condition`, or fails saying what did not happen.
    static func wait(_ what: String, until condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(60)
        while !condition() {
            guard Date() < deadline else { throw HTTPClientError(description: "timed out waiting for \(what)") }
            usleep(2_000)
        }
    }
}
