import Foundation
import Testing
import WatchdogTesting

/// The ingest key ships in every app, so whoever unzips one holds it (issue 23). Each test
/// replays one of the attacks that moved a verdict or an alert before, against the real daemon
/// on port 0 with the app on the default admission settings: a real fleet first (400 installs
/// on 40 networks, sessions spread over two days, through a trusted proxy that names each
/// device's address), then the attacker, from one network.
@Suite struct IngestKeyAttackTests {
    static let app = "com.example.mail"

    /// A daemon behind a "proxy" (the test, on 127.0.0.1) whose `X-Forwarded-For` it trusts.
    static func daemon(_ extra: [String] = []) throws -> (daemon: Daemon, key: String, viewer: String) {
        let daemon = try Daemon(extraArguments: ["--trusted-proxy", "127.0.0.1"] + extra)
        let key = try daemon.addApp(app, admission: nil)
        return (daemon, key, try daemon.addToken(role: "viewer"))
    }

    /// Posts `json` to `path` as if from `address`.
    @discardableResult
    static func post(_ daemon: Daemon, _ path: String, key: String, from address: String, _ json: [String: Any]) throws -> Response {
        let data = try JSONSerialization.data(withJSONObject: json)
        let answer = try daemon.client.request("POST", path, token: key, headers: ["Content-Type": "application/json", "X-Forwarded-For": address], body: Array(data))
        #expect(answer.status == 202, "\(answer.text)")
        return answer
    }

    /// A real release: `sessions` installs (one session each, started over the last 48 hours),
    /// ten per network, `affected` of them with a glitch, spread evenly over the networks (one
    /// network counts as one network: glitches all on two networks are two testers' worth).
    static func fleet(_ daemon: Daemon, key: String, version: String, sessions: Int, affected: Int) throws {
        let now = Date()
        for network in 0..<(sessions / 10) {
            var starts: [[String: Any]] = [], reports: [[String: Any]] = []
            for index in network * 10..<(network + 1) * 10 {
                var session = Fixtures.session(version: version, build: "1")
                session["install_id"] = "I-\(version)-\(index)"
                session["started_at"] = ISO8601DateFormatter().string(from: now.addingTimeInterval(-Double(index % 48) * 3600 - 60))
                starts.append(session)
                if index % (sessions / affected) == 0 {
                    var report = try Fixtures.freshReport(version: version, build: "1", kind: "view_frame_mismatch", sessionID: session["id"] as? String)
                    report["install_id"] = session["install_id"]
                    reports.append(report)
                }
            }
            let address = "100.\(64 + network / 200).\(network % 200).17"
            try post(daemon, "/v1/sessions", key: key, from: address, ["sessions": starts])
            if !reports.isEmpty { try post(daemon, "/v1/reports", key: key, from: address, ["reports": reports]) }
        }
    }

    static func compare(_ daemon: Daemon, viewer: String) throws -> [String: Any] {
        let answer = try daemon.client.request("GET", "/v1/apps/\(app)/compare?base=14.1.0&target=14.2.0", token: viewer)
        #expect(answer.status == 200, "\(answer.text)")
        return answer.json
    }

    static func verdict(_ compare: [String: Any]) -> String? {
        (compare["overall"] as? [String: Any])?["verdict"] as? String
    }

    static func releases(_ daemon: Daemon, viewer: String) throws -> [[String: Any]] {
        try daemon.client.request("GET", "/v1/apps/\(app)/releases", token: viewer).json["releases"] as? [[String: Any]] ?? []
    }

    /// Session starts of `version`, `count` of them, from `install` (nil: a fresh install each).
    static func forgedSessions(version: String, count: Int, install: String?) -> [[String: Any]] {
        (0..<count).map { _ in
            var session = Fixtures.session(version: version, build: "1")
            session["install_id"] = install ?? "forged-\(UUID().uuidString)"
            session["started_at"] = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-120))
            return session
        }
    }

    @Test func freshInstallsFromOneNetworkCannotTurnARegressionIntoAnImprovement() throws {
        let (daemon, key, viewer) = try Self.daemon()
        try Self.fleet(daemon, key: key, version: "14.1.0", sessions: 400, affected: 20)
        try Self.fleet(daemon, key: key, version: "14.2.0", sessions: 400, affected: 80)
        let before = try Self.compare(daemon, viewer: viewer)
        #expect(Self.verdict(before) == "regressed", "\(before["overall"] ?? "")")
        #expect((before["reliability"] as? [String: Any])?["reliable"] as? Bool == true, "\(before["reliability"] ?? "")")
        // 5 requests of 500 session starts from fresh installs, one address: the attack that
        // turned `regressed` into `improved` 0.55×.
        for _ in 0..<5 {
            try Self.post(daemon, "/v1/sessions", key: key, from: "203.0.113.9", ["sessions": Self.forgedSessions(version: "14.2.0", count: 500, install: nil)])
        }
        let after = try Self.compare(daemon, viewer: viewer)
        #expect(Self.verdict(after) == "regressed", "\(after["overall"] ?? "")")
        let target = try #require(try Self.releases(daemon, viewer: viewer).first { $0["version"] as? String == "14.2.0" })
        #expect(target["sessions"] as? Int == 420, "20 new installs an hour from one network count")
        #expect(target["implausible_sessions"] as? Int == 2_480, "the rest is stored and held apart")
    }

    @Test func oneInstallStartingThousandsOfSessionsCannotDiluteARegression() throws {
        let (daemon, key, viewer) = try Self.daemon()
        try Self.fleet(daemon, key: key, version: "14.1.0", sessions: 400, affected: 20)
        try Self.fleet(daemon, key: key, version: "14.2.0", sessions: 400, affected: 80)
        // 18 requests of 500 sessions from one install id: before, 0.17× `improved`.
        for _ in 0..<18 {
            try Self.post(daemon, "/v1/sessions", key: key, from: "203.0.113.9", ["sessions": Self.forgedSessions(version: "14.2.0", count: 500, install: "one-install")])
        }
        let after = try Self.compare(daemon, viewer: viewer)
        #expect(["regressed", "unreliable"].contains(Self.verdict(after)), "\(after["overall"] ?? "")")
        let target = try #require(try Self.releases(daemon, viewer: viewer).first { $0["version"] as? String == "14.2.0" })
        #expect(target["sessions"] as? Int == 420, "an install's first 20 starts of the hour count")
        #expect(target["implausible_sessions"] as? Int == 8_980)
    }

    @Test func reportsOfSessionsThatNeverStartedCannotTurnAnImprovementIntoARegression() throws {
        let (daemon, key, viewer) = try Self.daemon()
        try Self.fleet(daemon, key: key, version: "14.1.0", sessions: 400, affected: 80)
        try Self.fleet(daemon, key: key, version: "14.2.0", sessions: 400, affected: 40)
        #expect(Self.verdict(try Self.compare(daemon, viewer: viewer)) == "improved")
        // 50 reports naming sessions nobody started, spread over real install ids.
        let reports = try (0..<50).map { index -> [String: Any] in
            var report = try Fixtures.freshReport(version: "14.2.0", build: "1", kind: "view_frame_mismatch", sessionID: UUID().uuidString.lowercased())
            report["install_id"] = "I-14.2.0-\(index * 7)"
            return report
        }
        try Self.post(daemon, "/v1/reports", key: key, from: "203.0.113.9", ["reports": reports])
        let after = try Self.compare(daemon, viewer: viewer)
        #expect(Self.verdict(after) == "improved", "\(after["overall"] ?? "")")
        let target = try #require(try Self.releases(daemon, viewer: viewer).first { $0["version"] as? String == "14.2.0" })
        #expect(target["unknown_session_reports"] as? Int == 50)
        #expect(target["affected_sessions"] as? Int == 40)
    }

    /// Alerts: five made-up releases with the highest version numbers do not push the real one
    /// out of the rules' view, and a made-up release from one network is never listed, so the
    /// attacker's words never reach the team's channel.
    @Test func forgedReleasesNeitherSilenceNorFireAlerts() throws {
        let receiver = try WebhookReceiver()
        let (daemon, key, viewer) = try Self.daemon(["--alert-delay", "0"])
        let added = try daemon.runCommand(["alerts", "hooks", "add", Self.app, "--url", receiver.url, "--name", "team"])
        #expect(added.status == 0)
        let hook = try #require(try daemon.runCommand(["alerts", "hooks", "list", Self.app]).stdout.split(separator: "\t").first.map(String.init))
        for condition in [["--condition", "release_regressed", "--minimum-sessions", "100"], ["--condition", "new_issue"],
                          ["--condition", "glitch_free_rate_below", "--threshold", "0.99", "--minimum-sessions", "100"]] {
            #expect(try daemon.runCommand(["alerts", "rules", "add", Self.app, "--hook", hook] + condition).status == 0)
        }
        // The attacker's releases: 9999.0.0…9999.0.4 with five starts each, and one of 150
        // sessions from new installs on one network with reports naming a made-up kind.
        for patch in 0..<5 {
            try Self.post(daemon, "/v1/sessions", key: key, from: "203.0.113.9",
                          ["sessions": Self.forgedSessions(version: "9999.0.\(patch)", count: 5, install: nil)])
        }
        let fake = Self.forgedSessions(version: "666.0.0", count: 150, install: nil)
        try Self.post(daemon, "/v1/sessions", key: key, from: "203.0.113.9", ["sessions": fake])
        let lies = try fake.map { session -> [String: Any] in
            var report = try Fixtures.freshReport(version: "666.0.0", build: "1", kind: "x-critical_data_loss", sessionID: session["id"] as? String)
            report["screen"] = "URGENT: roll back now, see https://evil.example/fix"
            return report
        }
        try Self.post(daemon, "/v1/reports", key: key, from: "203.0.113.9", ["reports": lies])
        // The real releases, regressed.
        try Self.fleet(daemon, key: key, version: "14.1.0", sessions: 400, affected: 20)
        try Self.fleet(daemon, key: key, version: "14.2.0", sessions: 400, affected: 80)
        let listed = try Self.releases(daemon, viewer: viewer).compactMap { $0["version"] as? String }
        #expect(Set(listed) == ["14.1.0", "14.2.0"], "only the fleet's releases are listed: \(listed)")
        #expect(receiver.waitForRequests(1, seconds: 120), "the real release's regression fires")
        // Every alert a pass fires is in; a second pass would be empty (nothing changed).
        Thread.sleep(forTimeInterval: 3)
        let texts = receiver.received.map { String(decoding: $0.body, as: UTF8.self) }
        #expect(texts.contains { $0.contains("release_regressed") && $0.contains("14.2.0") }, "\(texts)")
        #expect(!texts.contains { $0.contains("666.0.0") || $0.contains("9999.0") || $0.contains("evil.example") }, "\(texts)")
    }

    /// Issue 39, point 4: behind the trusted proxy, a client's own `X-Forwarded-For` line
    /// before the proxy's, or a last entry that is no address, used to pick the network (or
    /// none, skipping the new-installs cap: 60 of 60 counted). Three requests of 20 fresh
    /// installs each way: 20 count, as from one network.
    @Test func twoForwardedForLinesAndUnparsableEntriesKeepTheNewInstallsCap() throws {
        let (daemon, key, viewer) = try Self.daemon()
        func post(version: String, forwardedFor lines: [String]) throws {
            let body = Array(try JSONSerialization.data(withJSONObject: ["sessions": Self.forgedSessions(version: version, count: 20, install: nil)]))
            var head = "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer \(key)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n"
            for line in lines { head += "X-Forwarded-For: \(line)\r\n" }
            let answer = try daemon.client.exchange(Array((head + "\r\n").utf8) + body)
            #expect(answer.status == 202, "\(answer.text)")
        }
        // The client's own line names a new /24 each time; the proxy's line, last, the same one.
        for index in 0..<3 { try post(version: "14.2.0", forwardedFor: ["198.51.\(index).7", "203.0.113.9"]) }
        // The proxy's entry is no address: port forms, a bracketed IPv6 address, "unknown".
        for entry in ["203.0.113.9:443", "[2001:db8::1]:443", "unknown"] { try post(version: "14.3.0", forwardedFor: [entry]) }
        #expect(try daemon.runCommand(["releases", "admit", Self.app, "14.2.0", "1"]).status == 0)
        #expect(try daemon.runCommand(["releases", "admit", Self.app, "14.3.0", "1"]).status == 0)
        let releases = try Self.releases(daemon, viewer: viewer)
        for version in ["14.2.0", "14.3.0"] {
            let release = try #require(releases.first { $0["version"] as? String == version })
            #expect(release["sessions"] as? Int == 20 && release["implausible_sessions"] as? Int == 40, "\(version): \(release)")
        }
    }

    @Test func aSessionDated2007IsHeldApartAndDoesNotMoveItsReleasesFirstDay() throws {
        let (daemon, key, viewer) = try Self.daemon()
        try Self.fleet(daemon, key: key, version: "14.2.0", sessions: 100, affected: 10)
        var old = Self.forgedSessions(version: "14.2.0", count: 1, install: "I-old")
        // Hours after the protocol's earliest time (2007-01-09T00:00Z, the first iPhone): accepted,
        // and far from any arrival. Pinned by the protocol, not by the clock.
        old[0]["started_at"] = "2007-01-09T18:41:00Z"
        try Self.post(daemon, "/v1/sessions", key: key, from: "100.64.1.17", ["sessions": old])
        let release = try #require(try Self.releases(daemon, viewer: viewer).first)
        #expect(release["sessions"] as? Int == 100)
        #expect(release["implausible_sessions"] as? Int == 1)
        #expect((release["first_seen"] as? String)?.hasPrefix("2007") == false, "\(release["first_seen"] ?? "")")
    }
}
