import Foundation
import Testing

/// Triage in the real `watchdogd` process (issue 42, point 1): an issue resolved with
/// `watchdogd issues resolve`, seen again in a later declared release, is regressed and the
/// daemon's own alert worker sends one `issue_regressed` delivery to a receiver on loopback; a
/// forged, undeclared release sends nothing.
@Suite struct TriageDaemonTests {
    static let app = "com.example.mail"

    @Test func anIssueResolvedWithTheCLIRegressesInTheNextDeclaredReleaseAndAlertsOnce() throws {
        let receiver = try WebhookReceiver()
        let daemon = try Daemon(extraArguments: ["--alert-delay", "0"])
        let key = try daemon.addApp(Self.app, admission: "strict")
        let viewer = try daemon.addToken(role: "viewer")
        for version in ["1.0", "1.1"] { #expect(try daemon.runCommand(["releases", "add", Self.app, version, "1"]).status == 0) }
        #expect(try daemon.runCommand(["alerts", "hooks", "add", Self.app, "--url", receiver.url, "--name", "pager"]).status == 0)
        let hook = try #require(try daemon.runCommand(["alerts", "hooks", "list", Self.app]).stdout.split(separator: "\t").first.map(String.init))
        #expect(try daemon.runCommand(["alerts", "rules", "add", Self.app, "--condition", "issue_regressed", "--hook", hook]).status == 0)
        try AlertDaemonTests.release(daemon, key: key, version: "1.0", sessions: 10, affected: 3)
        let issues = try daemon.client.request("GET", "/v1/apps/\(Self.app)/issues?release=1.0", token: viewer)
        let fingerprint = try #require((issues.json["issues"] as? [[String: Any]])?.first?["fingerprint"] as? String, "\(issues.text)")

        let resolved = try daemon.runCommand(["issues", "resolve", Self.app, fingerprint, "--note", "fixed in 1.1"])
        #expect(resolved.status == 0)
        let triage = try #require(try JSONSerialization.jsonObject(with: Data(resolved.stdout.utf8)) as? [String: Any])
        #expect(triage["state"] as? String == "resolved" && triage["resolved_in"] as? String == "1.0 (1)")
        #expect((triage["changed_by"] as? String)?.hasPrefix("cli:") == true)
        #expect(try daemon.runCommand(["issues", "snooze", Self.app, fingerprint]).status != 0)
        #expect(try daemon.runCommand(["issues", "resolve", Self.app, fingerprint, "--note", "bell \u{07}"]).status != 0)

        // A release nobody declared: unlisted, nothing regresses, nothing is sent.
        try AlertDaemonTests.release(daemon, key: key, version: "9.9", sessions: 10, affected: 5)
        try AlertDaemonTests.release(daemon, key: key, version: "1.1", sessions: 10, affected: 2)
        #expect(AlertDaemonTests.eventually { receiver.received.count >= 1 })
        let body = try #require(receiver.received.first?.json["alert"] as? [String: Any])
        #expect(body["condition"] as? String == "issue_regressed" && body["release"] as? String == "1.1 (1)")
        let state = try daemon.client.request("GET", "/v1/apps/\(Self.app)/issues?release=1.1&state=regressed", token: viewer)
        #expect((state.json["issues"] as? [[String: Any]])?.first?["fingerprint"] as? String == fingerprint)
        // More data, more passes of the worker: still one delivery.
        try AlertDaemonTests.release(daemon, key: key, version: "1.1", sessions: 10, affected: 2)
        #expect(try AlertDaemonTests.eventually { try daemon.sql("SELECT count(*) FROM alert_deliveries WHERE state = 'delivered'").first?.first == "1" })
        Thread.sleep(forTimeInterval: 1.5)
        #expect(receiver.received.count == 1)
        let audit = try daemon.runCommand(["audit", "--action", "issue.resolve"])
        #expect(audit.status == 0 && audit.stdout.contains("\"fixed in 1.1\""), "\(audit.stdout)")
    }
}
