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
        // The pass after the restart ran before that delivery (evaluate, then deliver): the
        // firing it found stored kept it from alerting again.
        let after = try Self.deliveries(daemon)
        #expect(after.count == 1 && after.first?.state == "delivered" && (after.first?.attempts ?? 0) >= 2, "\(after)")
        #expect(daemon.stop() == 0)
    }
}
