import Foundation
import GRDB
import Testing

/// Alerts in the real `watchdogd` process: rules and hooks made with the CLI, evaluated by the
/// daemon's own worker after ingest commits, and a delivery that outlives `kill -9`.
@Suite struct AlertDaemonTests {
    static let app = "com.example.mail"

    /// `sessions` sessions of a release over HTTP, the first `affected` with a glitch.
    static func release(_ daemon: Daemon, key: String, version: String, sessions: Int, affected: Int) throws {
        var starts: [[String: Any]] = [], reports: [[String: Any]] = []
        for index in 0..<sessions {
            var session = Fixtures.session(version: version, build: "1")
            session["install_id"] = "I-\(version)-\(index)"
            starts.append(session)
            if index < affected {
                var report = try Fixtures.freshReport(version: version, build: "1", kind: "view_frame_mismatch", sessionID: session["id"] as? String)
                report["install_id"] = "I-\(version)-\(index)"
                reports.append(report)
            }
        }
        #expect(try daemon.client.postJSON("/v1/sessions", token: key, json: ["sessions": starts]).status == 202)
        #expect(try daemon.client.postJSON("/v1/reports", token: key, json: ["reports": reports]).status == 202)
    }

    static func deliveries(_ daemon: Daemon) throws -> [(state: String, attempts: Int, alert: String)] {
        try daemon.sql("SELECT state, attempts, alert_id FROM alert_deliveries ORDER BY id").map { ($0[0] ?? "", Int($0[1] ?? "") ?? -1, $0[2] ?? "") }
    }

    /// Waits (bounded; a limit on failure, not a measure) for `condition`.
    static func eventually(_ seconds: Double = 60, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            usleep(50_000)
        }
        return try condition()
    }

    @Test func aRestartMidRetryLosesNothingAndSendsTheAlertOnce() throws {
        let receiver = try WebhookReceiver(status: 503)
        let daemon = try Daemon(extraArguments: ["--alert-delay", "0", "--alert-retry-base", "1"])
        let key = try daemon.addApp(Self.app)
        let added = try daemon.runCommand(["alerts", "hooks", "add", Self.app, "--url", receiver.url, "--name", "pager"])
        #expect(added.status == 0)
        let secret = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(secret.hasPrefix("whsec_"))
        let hook = try #require(try daemon.runCommand(["alerts", "hooks", "list", Self.app]).stdout.split(separator: "\t").first.map(String.init))
        let rule = try daemon.runCommand(["alerts", "rules", "add", Self.app, "--condition", "release_regressed", "--hook", hook, "--minimum-sessions", "100"])
        #expect(rule.status == 0 && rule.stdout.hasPrefix("ar"), "\(rule.stdout)")
        #expect(try daemon.runCommand(["alerts", "rules", "add", Self.app, "--condition", "new_issue", "--hook", hook, "--threshold", "0.5"]).status != 0,
                "threshold is not a parameter of new_issue")

        try Self.release(daemon, key: key, version: "14.1.0", sessions: 400, affected: 20)
        try Self.release(daemon, key: key, version: "14.2.0", sessions: 400, affected: 80)
        // The daemon's worker evaluates after the commits and tries the receiver, which is down.
        #expect(Self.eventually { !receiver.received.isEmpty })
        #expect(try Self.eventually { try Self.deliveries(daemon).first?.attempts ?? 0 >= 1 })
        let pending = try Self.deliveries(daemon)
        #expect(pending.count == 1 && pending.first?.state == "pending", "\(pending)")

        daemon.killHard()
        receiver.answer(200)
        try daemon.restart()

        #expect(Self.eventually { receiver.received.contains { $0.status == 200 } })
        let received = receiver.received
        #expect(received.filter { $0.status == 200 }.count == 1)
        #expect(Set(received.map(\.deliveryID)) == [pending.first?.alert], "one alert, one idempotency key across the restart")
        #expect(received.allSatisfy { $0.isSigned(with: secret) })
        #expect(((received.last?.json["alert"] as? [String: Any])?["release"] as? String) == "14.2.0 (1)")
        // The firing stored before the kill kept the evaluation after the restart from alerting
        // again. The receiver sees the request before the daemon records its answer: waited for.
        #expect(try Self.eventually { try Self.deliveries(daemon).first?.state == "delivered" })
        let after = try Self.deliveries(daemon)
        #expect(after.count == 1 && after.first?.state == "delivered" && (after.first?.attempts ?? 0) >= 2, "\(after)")
        #expect(daemon.stop() == 0)
    }
}

/// Issue 23, point 4, against the real daemon: junk releases cannot silence a real release's
/// alert, and a hostile or dead hook costs only its own deliveries — in memory and in time.
extension AlertDaemonTests {
    /// A hook of `app` made with the CLI; its id.
    static func addHook(_ daemon: Daemon, app: String, url: String) throws -> String {
        #expect(try daemon.runCommand(["alerts", "hooks", "add", app, "--url", url]).status == 0)
        let lines = try daemon.runCommand(["alerts", "hooks", "list", app]).stdout.split(separator: "\n")
        let line = try #require(lines.first { $0.contains(url) })
        return String(line.split(separator: "\t")[0])
    }

    /// Queues a signed test delivery to a hook (the dashboard's "send test").
    static func sendTest(_ daemon: Daemon, admin: String, app: String, hook: String) throws {
        let response = try daemon.client.request("POST", "/v1/admin/apps/\(app)/alerts/hooks/\(hook)/test", token: admin)
        #expect(response.status == 202, "\(response.text)")
    }

    static func delivery(_ daemon: Daemon, hook: String) throws -> (state: String, attempts: Int, status: String?, error: String?)? {
        try daemon.sql("SELECT state, attempts, last_status, last_error FROM alert_deliveries WHERE hook_id = '\(hook)' ORDER BY id DESC LIMIT 1")
            .first.map { ($0[0] ?? "", Int($0[1] ?? "") ?? -1, $0[2], $0[3]) }
    }

    @Test func fiveJunkReleasesDoNotSilenceTheRealReleasesAlert() throws {
        let receiver = try WebhookReceiver()
        let daemon = try Daemon(extraArguments: ["--alert-delay", "0"])
        let key = try daemon.addApp(Self.app)
        let hook = try Self.addHook(daemon, app: Self.app, url: receiver.url)
        #expect(try daemon.runCommand(["alerts", "rules", "add", Self.app, "--condition", "release_regressed", "--hook", hook,
                                       "--minimum-sessions", "100", "--minimum-installs", "20"]).status == 0)
        // The attack: one request, a few session starts for each of five versions above
        // every real one, from one install.
        let junk = (0..<5).flatMap { index in
            (0..<3).map { _ in
                var session = Fixtures.session(version: "9999.0.\(index)", build: "1")
                session["install_id"] = "attacker"
                return session
            }
        }
        #expect(try daemon.client.postJSON("/v1/sessions", token: key, json: ["sessions": junk]).status == 202)
        try Self.release(daemon, key: key, version: "14.1.0", sessions: 400, affected: 20)
        try Self.release(daemon, key: key, version: "14.2.0", sessions: 400, affected: 80)
        #expect(receiver.waitForRequests(1, seconds: 30), "the real release's alert fired")
        let alert = receiver.received.first?.json["alert"] as? [String: Any]
        #expect(alert?["release"] as? String == "14.2.0 (1)" && alert?["base"] as? String == "14.1.0 (1)", "\(alert ?? [:])")
        #expect(daemon.stop() == 0)
    }

    @Test func aHookAnsweringAGigabyteLeavesTheDaemonsMemoryFlat() throws {
        let healthy = try WebhookReceiver()
        let failing = try HostileHook(.endless(status: 500))
        let accepting = try HostileHook(.endless(status: 200))
        let daemon = try Daemon()
        _ = try daemon.addApp(Self.app)
        let admin = try daemon.addToken(role: "admin")
        // A first delivery loads what sending needs (libcurl, TLS): the baseline is after it.
        let warm = try Self.addHook(daemon, app: Self.app, url: healthy.url)
        try Self.sendTest(daemon, admin: admin, app: Self.app, hook: warm)
        #expect(healthy.waitForRequests(1))
        #expect(try Self.eventually { try Self.delivery(daemon, hook: warm)?.state == "delivered" })
        let pid = daemon.process.processIdentifier
        let before = HostileClientTests.residentKiB(pid)

        // A 500 with 1 GiB of body: 4 KiB are read for the log, then the connection is cut.
        let failingHook = try Self.addHook(daemon, app: Self.app, url: failing.url)
        try Self.sendTest(daemon, admin: admin, app: Self.app, hook: failingHook)
        #expect(try Self.eventually(30) { try Self.delivery(daemon, hook: failingHook)?.attempts ?? 0 >= 1 })
        let failed = try Self.delivery(daemon, hook: failingHook)
        #expect(failed?.state == "pending" && failed?.status == "500" && (failed?.error?.count ?? 0) <= 220, "\(String(describing: failed))")
        // A 200 with 1 GiB of body: the status is the answer; nothing more is read.
        let acceptingHook = try Self.addHook(daemon, app: Self.app, url: accepting.url)
        try Self.sendTest(daemon, admin: admin, app: Self.app, hook: acceptingHook)
        #expect(try Self.eventually(30) { try Self.delivery(daemon, hook: acceptingHook)?.state == "delivered" })

        let after = HostileClientTests.residentKiB(pid)
        print("webhook bodies: RSS \(before) KiB → \(after) KiB; the receivers wrote \(failing.bytesSent >> 10) KiB (500) and \(accepting.bytesSent >> 10) KiB (200) of 1 GiB each")
        #expect(after - before < 20 * 1024, "RSS \(before) KiB → \(after) KiB")
        #expect(failing.bytesSent < 256 << 20 && accepting.bytesSent < 256 << 20, "the download was cut: \(failing.bytesSent), \(accepting.bytesSent) bytes")
        #expect(try daemon.client.request("GET", "/healthz").status == 200)
        #expect(daemon.stop() == 0)
    }

    @Test func aRedirectIsAnAnswerNotFollowed() throws {
        let target = try WebhookReceiver()
        let redirecting = try HostileHook(.redirect(to: target.url))
        let daemon = try Daemon()
        _ = try daemon.addApp(Self.app)
        let admin = try daemon.addToken(role: "admin")
        let hook = try Self.addHook(daemon, app: Self.app, url: redirecting.url)
        try Self.sendTest(daemon, admin: admin, app: Self.app, hook: hook)
        #expect(try Self.eventually(30) { try Self.delivery(daemon, hook: hook)?.attempts ?? 0 >= 1 })
        let tried = try Self.delivery(daemon, hook: hook)
        #expect(tried?.state == "pending" && tried?.status == "307", "a 3xx is not a success: \(String(describing: tried))")
        #expect(redirecting.requests == 1 && target.received.isEmpty, "the Location was not followed")
        #expect(daemon.stop() == 0)
    }

    @Test func threeHooksThatNeverAnswerDelayAnotherAppsHookByUnderASecond() throws {
        let silent = try (0..<3).map { _ in try HostileHook(.silent) }
        let healthy = try WebhookReceiver()
        // Dead hooks hold their connection for the whole 30 s attempt.
        let daemon = try Daemon(extraArguments: ["--alert-timeout", "30"])
        _ = try daemon.addApp(Self.app)
        _ = try daemon.addApp("com.example.other")
        let admin = try daemon.addToken(role: "admin")
        let dead = try silent.map { try Self.addHook(daemon, app: Self.app, url: $0.url) }
        let alive = try Self.addHook(daemon, app: "com.example.other", url: healthy.url)
        for hook in dead { try Self.sendTest(daemon, admin: admin, app: Self.app, hook: hook) }
        #expect(Self.eventually(30) { silent.allSatisfy { $0.requests == 1 } }, "the three requests are in flight")

        let sentAt = Date()
        try Self.sendTest(daemon, admin: admin, app: "com.example.other", hook: alive)
        #expect(healthy.waitForRequests(1, seconds: 60))
        let delay = Date().timeIntervalSince(sentAt)
        print("a healthy hook beside three that never answer: delivered \(Int(delay * 1000)) ms after it was queued")
        #expect(delay < 1, "\(delay) s")
        #expect(try Self.eventually { try Self.delivery(daemon, hook: alive)?.state == "delivered" })

        // Stopping cancels the three in flight; they stay pending, as they were.
        let stoppedAt = Date()
        #expect(daemon.stop() == 0)
        #expect(Date().timeIntervalSince(stoppedAt) < 20, "stop does not wait out the 30 s attempts")
        for hook in dead {
            let left = try Self.delivery(daemon, hook: hook)
            #expect(left?.state == "pending" && left?.attempts == 0, "\(String(describing: left))")
        }
    }
}
