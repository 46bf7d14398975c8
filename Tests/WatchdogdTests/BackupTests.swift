import Foundation
import GRDB
import Testing

@Suite struct BackupTests {
    @Test func anOnlineBackupTakenWhileClientsPostRestoresIntoAWorkingServer() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let viewer = try daemon.addToken(role: "viewer")
        #expect(try daemon.client.postJSON("/v1/reports", token: key, json: try Fixtures.json("reports/valid-batch.json")).status == 202)
        let stop = Locked(false)
        let port = daemon.port
        let bodies = try (0..<400).map { _ in Array(try JSONSerialization.data(withJSONObject: ["reports": try (0..<5).map { _ in try Fixtures.freshReport() }])) }
        let poster = Thread {
            let client = HTTPClient(port: port)
            for body in bodies where !stop.value {
                _ = try? client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: body)
            }
        }
        poster.start()
        usleep(200_000)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("backup-\(UUID().uuidString).sqlite3")
        defer { try? FileManager.default.removeItem(at: file) }
        let backup = try daemon.runCommand(["backup", "--to", file.path])
        stop.update { $0 = true }
        while poster.isExecuting { usleep(1000) }
        #expect(backup.status == 0)
        #expect(backup.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == file.path)
        #expect(try daemon.runCommand(["backup", "--to", file.path]).status != 0, "does not overwrite without --force")

        var configuration = Configuration()
        configuration.readonly = true
        let copy = try DatabaseQueue(path: file.path, configuration: configuration)
        let (rows, rolledUp) = try copy.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM reports") ?? 0,
             try Int.fetchOne(db, sql: "SELECT sum(reports) + sum(suspect_reports) FROM release_kinds") ?? -1)
        }
        try copy.close()
        #expect(rows >= 50)
        #expect(rows == rolledUp, "one consistent snapshot: roll-ups agree with rows")

        #expect(try daemon.runCommand(["restore", "--from", file.path]).status != 0, "refused while serve runs")
        let restored = try Daemon(dataDir: FileManager.default.temporaryDirectory.appendingPathComponent("restored-\(UUID().uuidString)"), startServing: false)
        #expect(try restored.runCommand(["restore", "--from", file.path]).status == 0)
        try restored.restart()
        let stats = try restored.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer)
        let release = try #require((stats.json["releases"] as? [[String: Any]])?.first)
        #expect((release["reports"] as? Int ?? 0) + (release["suspect_reports"] as? Int ?? 0) == rows, "credentials and data came back")
        #expect(try restored.client.postJSON("/v1/reports", token: key, json: try Fixtures.json("reports/valid-batch.json")).json["duplicates"] as? Int == 50)
        try? FileManager.default.removeItem(at: restored.dataDir)
    }
}
