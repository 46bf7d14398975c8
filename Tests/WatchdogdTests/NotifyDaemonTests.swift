import Foundation
import Testing

/// Hook kinds and the digest in the real `watchdogd` process (issue 42, point 2): a PagerDuty
/// hook made with the CLI (its routing key read from a file, never printed) paged by the
/// daemon's own worker, and `watchdogd alerts digest APP --now` asking the running server for a
/// digest that a Teams receiver gets as a card.
@Suite struct NotifyDaemonTests {
    static let app = AlertDaemonTests.app
    static let routingKey = "R0123456789abcdefghijABCDEFGHIJ9"

    @Test func aPagerDutyHookFromTheCLIIsPagedAndADigestAsked() throws {
        let pagerDuty = try WebhookReceiver(status: 202)
        let teams = try WebhookReceiver(status: 202)
        let daemon = try Daemon(extraArguments: ["--alert-delay", "0", "--smtp-url", "smtp://localhost:2525", "--smtp-from", "watchdog@example.com"])
        let key = try daemon.addApp(Self.app)
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("watchdog-routing-key-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: keyFile) }
        try "\(Self.routingKey)\n".write(to: keyFile, atomically: true, encoding: .utf8)
        let added = try daemon.runCommand(["alerts", "hooks", "add", Self.app, "--kind", "pagerduty", "--url", pagerDuty.url, "--routing-key-file", keyFile.path])
        let hook = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(added.status == 0 && hook.hasPrefix("wh") && !added.stdout.contains(Self.routingKey), "\(added.stdout)")
        let refused = try daemon.runCommand(["alerts", "hooks", "add", Self.app, "--kind", "pagerduty", "--url", pagerDuty.url, "--digest", "--routing-key-file", keyFile.path])
        #expect(refused.status != 0, "a pagerduty hook takes no digest")
        let teamsHook = try daemon.runCommand(["alerts", "hooks", "add", Self.app, "--kind", "teams", "--url", teams.url, "--digest"])
        #expect(teamsHook.status == 0 && teamsHook.stdout.hasPrefix("whsec_"))
        let listed = try daemon.runCommand(["alerts", "hooks", "list", Self.app]).stdout.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(Set(listed.compactMap { $0.count > 1 ? $0[1] : nil }) == ["pagerduty", "teams"], "\(listed)")
        let teamsID = try #require(listed.first { $0.count > 1 && $0[1] == "teams" }?.first)
        #expect(try daemon.runCommand(["alerts", "rules", "add", Self.app, "--condition", "release_regressed", "--hook", hook, "--minimum-sessions", "100"]).status == 0)

        try AlertDaemonTests.release(daemon, key: key, version: "14.1.0", sessions: 400, affected: 20)
        try AlertDaemonTests.release(daemon, key: key, version: "14.2.0", sessions: 400, affected: 80)
        #expect(AlertDaemonTests.eventually { !pagerDuty.received.isEmpty })
        let trigger = try #require(pagerDuty.received.first?.json)
        #expect(trigger["routing_key"] as? String == Self.routingKey && trigger["event_action"] as? String == "trigger")
        #expect(trigger["dedup_key"] as? String == pagerDuty.received.first?.deliveryID)

        let operatorToken = try daemon.addToken(role: "operator")
        let command = try ChildProcess.run(Daemon.binary, ["alerts", "digest", Self.app, "--now", "--hook", teamsID, "--url", "http://127.0.0.1:\(daemon.port)",
                                                         "--token", operatorToken], seconds: Daemon.commandSeconds)
        #expect(command.status == 0, "\(command.stdout) \(command.stderr)")
        // The one asked for (the weekly one, if its minute came, is `digest-HOOK-WEEK`).
        func isAsked(_ request: WebhookReceiver.Received) -> Bool { request.headers["watchdog-event"] == "digest" && request.deliveryID?.hasPrefix("digest-") == false }
        #expect(AlertDaemonTests.eventually { teams.received.contains(where: isAsked) })
        let digest = try #require(teams.received.first(where: isAsked)?.json)
        let card = (digest["attachments"] as? [[String: Any]])?.first?["content"] as? [String: Any]
        #expect(card?["type"] as? String == "AdaptiveCard" && card?["version"] as? String == "1.4")
        let runs = (card?["body"] as? [[String: Any]] ?? []).flatMap { $0["inlines"] as? [[String: Any]] ?? [] }.compactMap { $0["text"] as? String }
        #expect(runs.contains { $0.contains("14.2.0 (1)") && $0.contains("regressed against") }, "\(runs)")
        #expect(daemon.stop() == 0)
    }
}
