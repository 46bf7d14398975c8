import Foundation
import GRDB
import Testing

@Suite struct DurabilityTests {
    @Test func restartKeepsReportsSessionsConfigAndCredentials() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let admin = try daemon.addToken(role: "admin")
        #expect(try daemon.client.postJSON("/v1/reports", token: key, json: try Fixtures.json("reports/valid-batch.json")).status == 202)
        #expect(try daemon.client.postJSON("/v1/sessions", token: key, json: ["sessions": [Fixtures.session()]]).status == 202)
        #expect(try daemon.client.request("PATCH", "/v1/admin/apps/com.example.mail/config", token: admin, body: Array(#"{"auto_fix": true}"#.utf8)).status == 200)
        let before = try daemon.client.request("GET", "/v1/apps/com.example.mail/releases", token: admin).json
        let etag = try daemon.client.request("GET", "/v1/config?app=com.example.mail", token: key).headers["etag"]

        #expect(daemon.stop() == 0)
        try daemon.restart()

        let after = try daemon.client.request("GET", "/v1/apps/com.example.mail/releases", token: admin).json
        #expect(NSDictionary(dictionary: before) == NSDictionary(dictionary: after))
        let config = try daemon.client.request("GET", "/v1/config?app=com.example.mail", token: key)
        #expect(config.json["auto_fix"] as? Bool == true)
        #expect(config.headers["etag"] == etag)
        #expect(try daemon.client.postJSON("/v1/reports", token: key, json: try Fixtures.json("reports/valid-batch.json")).json["duplicates"] as? Int == 50)
    }

    /// After SIGTERM a request already being received is still answered (and committed), while
    /// a connection opened during the drain is closed unanswered rather than left waiting.
    @Test func drainingAnswersTheRequestInFlightAndClosesNewConnections() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let report = try Fixtures.freshReport()
        let id = try #require(report["id"] as? String)
        let body = Array(try JSONSerialization.data(withJSONObject: ["reports": [report]]))
        // `Expect: 100-continue`: libmicrohttpd answers "100 Continue" once the handler has seen
        // the headers, so the request is known to be in flight before the signal.
        let inFlight = try KeepAliveConnection(port: daemon.port)
        try inFlight.write(Array("POST /v1/reports HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nExpect: 100-continue\r\n\r\n".utf8))
        #expect(try inFlight.readResponse()?.status == 100)

        daemon.process.terminate()
        // Until the drain begins new connections are still served; then they are closed unanswered.
        // (The receive timeout only tells "closed" from "left waiting"; the deadline stops a
        // regression from hanging the run.)
        var closedUnanswered = false
        let deadline = Date().addingTimeInterval(8)
        while !closedUnanswered, Date() < deadline {
            let late = try KeepAliveConnection(port: daemon.port, timeoutSeconds: 2)
            try late.write(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            closedUnanswered = late.closedWithoutAnswer()
            if !closedUnanswered { usleep(50_000) }
        }
        #expect(closedUnanswered, "a connection opened while draining is closed without an answer, not left waiting")
        #expect(daemon.process.isRunning, "still draining: the request in flight is not complete")

        try inFlight.write(body)
        let answer = try #require(try inFlight.readResponse())
        #expect(answer.status == 202)
        #expect(answer.headers["connection"]?.lowercased() == "close")
        #expect(daemon.waitForExit(after: "SIGTERM") == 0)
        try daemon.restart()
        #expect(try daemon.storedReportIDs().contains(id.lowercased()))
    }

    /// SIGTERM while keep-alive clients post continuously: the daemon answers or closes every
    /// connection, commits what it acknowledged, and exits 0.
    @Test func sigtermUnderKeepAliveLoadDrainsAndExitsZero() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let acknowledged = Locked<Set<String>>([])
        let answered = Locked(0)
        let group = DispatchGroup()
        let port = daemon.port
        for _ in 0..<8 {
            let batches: [(body: [UInt8], ids: [String])] = try (0..<400).map { _ in
                let reports = try (0..<3).map { _ in try Fixtures.freshReport() }
                return (Array(try JSONSerialization.data(withJSONObject: ["reports": reports])), reports.compactMap { $0["id"] as? String })
            }
            DispatchQueue.global().async(group: group) {
                guard let connection = try? KeepAliveConnection(port: port) else { return }
                for batch in batches {
                    guard (try? connection.write(KeepAliveConnection.post("/v1/reports", token: key, body: batch.body))) != nil,
                          let response = try? connection.readResponse() else { return }
                    answered.update { $0 += 1 }
                    if response.status == 202 { acknowledged.update { $0.formUnion(batch.ids) } }
                    if response.headers["connection"]?.lowercased() == "close" { return }
                }
            }
        }
        let deadline = Date().addingTimeInterval(30)
        while answered.value < 200, Date() < deadline { usleep(1_000) }
        #expect(daemon.stop() == 0)
        group.wait()
        let acked = acknowledged.value
        #expect(acked.count >= 200 * 3 / 2)
        try daemon.restart()
        let stored = Set(try daemon.storedReportIDs())
        #expect(acked.isSubset(of: stored), "\(acked.subtracting(stored).count) acknowledged reports missing")
        #expect(try daemon.runCommand(["check"]).status == 0)
    }

    /// Posts from several clients, kills the daemon with SIGKILL mid-stream, restarts it, and
    /// checks that every report acknowledged with 202 is stored, and that clients retrying
    /// everything (acknowledged or not) leaves each report stored and counted exactly once.
    @Test func killNineLosesNoAcknowledgedReportAndRetriesAreNotCountedTwice() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let viewer = try daemon.addToken(role: "viewer")
        let clients = 6
        let batchesPerClient = 150
        let batchSize = 4
        var plans: [[[[String: Any]]]] = []
        for _ in 0..<clients {
            plans.append(try (0..<batchesPerClient).map { _ in try (0..<batchSize).map { _ in try Fixtures.freshReport() } })
        }
        let acknowledged = Locked<Set<String>>([])
        let group = DispatchGroup()
        let port = daemon.port
        for client in 0..<clients {
            let batches: [(body: [UInt8], ids: [String])] = try plans[client].map { batch in
                (Array(try JSONSerialization.data(withJSONObject: ["reports": batch])), batch.compactMap { $0["id"] as? String })
            }
            DispatchQueue.global().async(group: group) {
                let http = HTTPClient(port: port, timeoutSeconds: 10)
                for batch in batches {
                    guard let response = try? http.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: batch.body),
                          response.status == 202 else { return }
                    acknowledged.update { $0.formUnion(batch.ids) }
                }
            }
        }
        let deadline = Date().addingTimeInterval(60)
        while acknowledged.value.count < 400, Date() < deadline { usleep(2_000) }
        daemon.killHard()
        group.wait()
        let acked = acknowledged.value
        let total = clients * batchesPerClient * batchSize
        #expect(acked.count >= 400)
        #expect(acked.count < total, "the kill came too late to interrupt anything")

        try daemon.restart()
        let stored = Set(try daemon.storedReportIDs())
        #expect(acked.isSubset(of: stored), "\(acked.subtracting(stored).count) acknowledged reports were lost")

        // Every client retries every batch.
        var duplicates = 0
        var accepted = 0
        for batch in plans.joined() {
            let response = try daemon.client.postJSON("/v1/reports", token: key, json: ["reports": batch])
            #expect(response.status == 202)
            duplicates += response.json["duplicates"] as? Int ?? 0
            accepted += response.json["accepted"] as? Int ?? 0
        }
        #expect(duplicates == stored.count)
        #expect(accepted + duplicates == total)
        #expect(try daemon.storedReportCount() == total)
        let release = try #require((try daemon.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer).json["releases"] as? [[String: Any]])?.first)
        #expect(release["reports"] as? Int == total)
        let rolledUp = try daemon.sql("SELECT sum(reports) FROM release_kinds").first?.first ?? nil
        let rows = String(try daemon.storedReportCount())
        #expect(rolledUp == rows, "roll-up \(rolledUp ?? "none"), rows \(rows)")
    }
}
