import Foundation
import Testing

/// `GET /v1/config` is answered from the request's headers when the config is ready in memory
/// (`ConfigFastPath`), and by the router otherwise. A client must not be able to tell which:
/// these tests ask the daemon the same question both ways — a query with `explain=false` always
/// goes to the router — and compare everything but the `Date`.
@Suite struct ConfigFastPathTests {
    static let app = "com.example.mail"

    /// Rules on versions, builds, channels, idioms and percentages, so clients fall into many
    /// rule sets.
    static let rules = #"""
    {"rules": [
      {"id": "beta-phones", "match": {"channels": ["beta"], "idioms": ["phone"]}, "set": {"frame_tolerance_pt": 4}},
      {"id": "new", "match": {"versions": ">=14.2.0"}, "set": {"watchdog_interval_s": 2}},
      {"id": "half", "match": {"percent": 50}, "set": {"auto_fix": true}},
      {"id": "build", "match": {"builds": ["31245"]}, "set": {"lock_threshold_s": 12}},
      {"id": "pads-old", "match": {"versions": "<14.0.0", "idioms": ["pad"]}, "set": {"report_sample_rate": 0.25}}
    ]}
    """#

    static func configured(_ daemon: Daemon) throws -> (ingest: String, admin: String) {
        let ingest = try daemon.addApp(app)
        let admin = try daemon.addToken(role: "admin")
        let patched = try daemon.client.request("PATCH", "/v1/admin/apps/\(app)/config", token: admin,
                                                headers: ["Content-Type": "application/json"], body: Array(rules.utf8))
        #expect(patched.status == 200)
        return (ingest, admin)
    }

    /// Everything a client sees but the `Date`, for comparing two answers.
    static func seen(_ response: Response) -> String {
        let headers = response.headers.filter { $0.key != "date" }.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        return "\(response.status)\n\(headers.joined(separator: "\n"))\n\n\(response.text)"
    }

    static let queries: [String] = {
        var queries: [String] = []
        for version in ["13.9.1", "14.2.0", "15.0"] {
            for (channel, idiom) in [("beta", "phone"), ("store", "pad"), ("beta", "pad")] {
                for install in ["I-1", "I-2", "I-3", "I-42", "I-77", "ünïcødé-🎹"] {
                    let encoded = install.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                    queries.append("app=\(app)&version=\(version)&build=31245&channel=\(channel)&idiom=\(idiom)&install_id=\(encoded)")
                }
            }
        }
        // Repeated names (the last value counts), unknown arguments, no client fields at all.
        queries.append("app=com.example.other&app=\(app)&version=14.2.0&install_id=I-9&os=17.1")
        queries.append("app=\(app)&channel=store&idiom=phone&channel=beta&install_id=I-3")
        queries.append("app=\(app)")
        return queries
    }()

    @Test func everyClientGetsWhatTheRouterAnswersWhetherOrNotItsConfigIsReady() throws {
        let daemon = try Daemon()
        let (ingest, admin) = try Self.configured(daemon)
        var compared = 0
        for token in [ingest, admin] {
            for query in Self.queries {
                // The first asks the router and makes the config ready; the next ones can be
                // answered from the headers.
                let answers = try (0..<3).map { _ in try daemon.client.request("GET", "/v1/config?\(query)", token: token) }
                let router = try daemon.client.request("GET", "/v1/config?\(query)&explain=false", token: token)
                #expect(router.status == 200, "\(query)")
                for answer in answers {
                    #expect(Self.seen(answer) == Self.seen(router), "\(query)")
                    compared += 1
                }
            }
        }
        print("config fast path: \(compared) answers compared with the router's")
    }

    @Test func ifNoneMatchGives304ExactlyWhenTheRouterWould() throws {
        let daemon = try Daemon()
        let (ingest, _) = try Self.configured(daemon)
        let path = "/v1/config?app=\(Self.app)&version=14.2.0&channel=beta&idiom=phone&install_id=I-42"
        let etag = try #require(try daemon.client.request("GET", path, token: ingest).headers["etag"])
        for candidate in [etag, "W/\(etag)", "\"nope\", \(etag)", "*", "\"nope\"", "", etag.lowercased() + "x"] {
            let answers = try (0..<2).map { _ in try daemon.client.request("GET", path, token: ingest, headers: ["If-None-Match": candidate]) }
            let router = try daemon.client.request("GET", path + "&explain=false", token: ingest, headers: ["If-None-Match": candidate])
            for answer in answers { #expect(Self.seen(answer) == Self.seen(router), "If-None-Match: \(candidate)") }
        }
        let notModified = try daemon.client.request("GET", path, token: ingest, headers: ["If-None-Match": etag])
        #expect(notModified.status == 304)
        #expect(notModified.body.isEmpty)
    }

    @Test func aChangedConfigIsServedAtOnceAndItsOldETagNoLongerMatches() throws {
        let daemon = try Daemon()
        let (ingest, admin) = try Self.configured(daemon)
        let path = "/v1/config?app=\(Self.app)&version=14.2.0&channel=beta&idiom=phone&install_id=I-42"
        let before = try daemon.client.request("GET", path, token: ingest)
        let etag = try #require(before.headers["etag"])
        #expect(try daemon.client.request("GET", path, token: ingest, headers: ["If-None-Match": etag]).status == 304)
        let patched = try daemon.client.request("PATCH", "/v1/admin/apps/\(Self.app)/config", token: admin,
                                                headers: ["Content-Type": "application/json"], body: Array(#"{"lock_threshold_s": 20}"#.utf8))
        #expect(patched.status == 200)
        let after = try daemon.client.request("GET", path, token: ingest, headers: ["If-None-Match": etag])
        #expect(after.status == 200)
        #expect(after.headers["etag"] != etag)
        #expect(after.json["lock_threshold_s"] as? Int == 20)
        #expect(after.headers["x-config-version"] != before.headers["x-config-version"])
        // A client the build rule matches keeps the rule's value.
        let ruled = try daemon.client.request("GET", path + "&build=31245", token: ingest)
        #expect(ruled.json["lock_threshold_s"] as? Int == 12)
    }

    @Test func credentialsAreCheckedOnEveryAnswer() throws {
        let daemon = try Daemon()
        let (ingest, _) = try Self.configured(daemon)
        let otherKey = try daemon.addApp("com.example.other")
        let path = "/v1/config?app=\(Self.app)&install_id=I-42"
        for _ in 0..<3 { #expect(try daemon.client.request("GET", path, token: ingest).status == 200) }
        // Another app's ingest key, even once it is known, reads only its own app.
        #expect(try daemon.client.request("GET", "/v1/config?app=com.example.other", token: otherKey).status == 200)
        for _ in 0..<2 {
            let refused = try daemon.client.request("GET", path, token: otherKey)
            #expect(refused.status == 403)
            #expect(refused.errorCode == "forbidden")
        }
        // A wrong token, a wrong scheme, and a bad query are refused as the router refuses them.
        #expect(try daemon.client.request("GET", path, token: ingest + "x").status == 401)
        #expect(try daemon.client.request("GET", path, headers: ["Authorization": "Basic \(ingest)"]).status == 401)
        #expect(try daemon.client.request("GET", "/v1/config?version=14.2.0", token: ingest).errorCode == "missing_parameter")
        let long = String(repeating: "v", count: 300)
        #expect(try daemon.client.request("GET", "/v1/config?app=\(Self.app)&version=\(long)", token: ingest).errorCode == "invalid_parameter")

        // Revoked from another process: refused within a second, like every other route.
        let id = String(ingest.split(separator: "_")[1])
        #expect(try daemon.runCommand(["tokens", "revoke", id]).status == 0)
        let revoked = Date()
        var refusedAfter: Double?
        while Date().timeIntervalSince(revoked) < 5, refusedAfter == nil {
            if try daemon.client.request("GET", path, token: ingest).status == 401 { refusedAfter = Date().timeIntervalSince(revoked) }
        }
        print("config fast path: revoked ingest key refused after \(refusedAfter.map { "\(Int($0 * 1000)) ms" } ?? "more than 5 s")")
        #expect(refusedAfter != nil)
    }

    /// Four pollers on keep-alive connections while an admin changes the config ten times:
    /// every answer is a whole version — its ETag, X-Config-Version and body belong together,
    /// as the router gives them — and versions never go backwards on a connection.
    @Test func pollersDuringChangesGetWholeVersionsInOrder() throws {
        let daemon = try Daemon()
        let (ingest, admin) = try Self.configured(daemon)
        let path = "/v1/config?app=\(Self.app)&version=14.2.0&channel=beta&idiom=phone&install_id=I-42"
        let request = Array("GET \(path) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(ingest)\r\n\r\n".utf8)
        let stop = Locked(false)
        let answers = Locked<[[Response]]>(Array(repeating: [], count: 4))
        let failures = Locked<[String]>([])
        let running = Locked(0)
        let finished = DispatchGroup()
        let port = daemon.port
        // Threads of their own: the test runner's and Dispatch's threads are busy with other tests.
        for poller in 0..<4 {
            finished.enter()
            Thread {
                defer { finished.leave() }
                do {
                    let connection = try KeepAliveConnection(port: port)
                    var seen: [Response] = []
                    // The last request is written after the stop is seen: after the last change.
                    var last = false
                    while !last {
                        last = stop.value
                        try connection.write(request)
                        guard let answer = try connection.readResponse() else { throw HTTPClientError(description: "connection closed") }
                        if seen.isEmpty { running.update { $0 += 1 } }
                        seen.append(answer)
                    }
                    answers.update { $0[poller] = seen }
                } catch {
                    failures.update { $0.append("poller \(poller): \(error)") }
                }
            }.start()
        }
        let deadline = Date().addingTimeInterval(30)
        while running.value < 4, failures.value.isEmpty, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        // Each version as the router answers it (explain=false never takes the fast path).
        var versions: [String: (etag: String, body: [UInt8])] = [:]
        func recordRouterAnswer() throws {
            let answer = try daemon.client.request("GET", path + "&explain=false", token: ingest)
            versions[answer.headers["x-config-version"] ?? "?"] = (answer.headers["etag"] ?? "", answer.body)
        }
        try recordRouterAnswer()
        for change in 0..<10 {
            Thread.sleep(forTimeInterval: 0.05)
            let patched = try daemon.client.request("PATCH", "/v1/admin/apps/\(Self.app)/config", token: admin,
                                                    headers: ["Content-Type": "application/json"], body: Array(#"{"lock_threshold_s": \#(11 + change)}"#.utf8))
            #expect(patched.status == 200)
            try recordRouterAnswer()
        }
        Thread.sleep(forTimeInterval: 0.05)
        stop.update { $0 = true }
        finished.wait()
        #expect(failures.value.isEmpty, "\(failures.value)")
        var total = 0
        for seen in answers.value {
            var last = 0
            for answer in seen {
                let version = answer.headers["x-config-version"] ?? "?"
                let known = try #require(versions[version], "version \(version) was never the router's")
                #expect(answer.status == 200)
                #expect(answer.headers["etag"] == known.etag && answer.body == known.body, "version \(version)")
                let number = Int(version) ?? 0
                #expect(number >= last, "a poller went back from version \(last) to \(number)")
                last = number
            }
            total += seen.count
            #expect(seen.last?.headers["x-config-version"] == "\(versions.keys.compactMap { Int($0) }.max() ?? 0)", "the last change reached every poller")
        }
        print("config fast path: \(total) answers to 4 pollers across \(versions.count) versions")
    }

    @Test func keepAliveConnectionsGetTheSameAnswerManyTimesAndEveryRequestIsCounted() throws {
        let daemon = try Daemon()
        let (ingest, _) = try Self.configured(daemon)
        let path = "/v1/config?app=\(Self.app)&version=14.2.0&channel=beta&idiom=phone&install_id=I-42"
        let reference = try daemon.client.request("GET", path + "&explain=false", token: ingest)
        let connections = try (0..<3).map { _ in try KeepAliveConnection(port: daemon.port) }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(ingest)\r\n\r\n".utf8)
        var answered = 0
        for _ in 0..<20 {
            for connection in connections {
                try connection.write(request + request)
                for _ in 0..<2 {
                    let answer = try #require(try connection.readResponse())
                    #expect(answer.status == 200)
                    #expect(answer.body == reference.body)
                    #expect(answer.headers["etag"] == reference.headers["etag"])
                    answered += 1
                }
            }
        }
        let metrics = try daemon.client.request("GET", "/metrics").text
        let line = metrics.split(separator: "\n").first {
            $0.hasPrefix("watchdog_http_requests_total{") && $0.contains(#"route="/v1/config""#) && $0.contains(#"status="200""#)
        }
        let counted = try #require(line.flatMap { Int($0.split(separator: " ").last ?? "") })
        #expect(counted == answered + 1, "the router's request and every keep-alive one")
    }
}
