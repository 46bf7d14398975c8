import Foundation
import Testing

/// Every change the CLI makes on the store is an audit row by `cli:<user>` from `local`, under
/// the same dotted action as the API's (issue 41): tokens, apps and keys, admission,
/// attestation, four eyes' settings, alert hooks and rules, releases. Read back with
/// `watchdogd audit` and through `GET /v1/admin/audit`; on the suite's store (SQLite, or
/// PostgreSQL with `WATCHDOG_TEST_STORE=postgres`, in .ci/run's list).
@Suite struct CLIAuditTests {
    static let app = "com.example.mail"

    static func rows(_ output: String) -> [[String: Any]] {
        output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test func everyChangeTheCLIMakesIsARowWithItsActorAndApp() throws {
        let daemon = try Daemon()
        _ = try daemon.addApp(Self.app)
        func run(_ arguments: [String]) throws -> String {
            let result = try daemon.runCommand(arguments)
            #expect(result.status == 0, "\(arguments.joined(separator: " ")): \(result.stdout)")
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let token = try run(["tokens", "add", "--role", "admin", "--app", Self.app, "lead"])
        let tokenID = String(token.split(separator: "_")[1])
        _ = try run(["apps", "add", Self.app, "--another-key"])
        _ = try run(["apps", "admission", Self.app, "--minimum-networks", "1"])
        _ = try run(["apps", "attestation", Self.app, "--mode", "observe", "--team-id", "ABCDE12345", "--bundle-id", Self.app])
        _ = try run(["apps", "attestation", Self.app, "--mode", "require"])
        let approvals = try run(["apps", "approvals", Self.app, "--require", "test_crash,rollouts"])
        #expect(approvals.contains("\"test_crash\"") && approvals.contains("\"rollouts\""), "\(approvals)")
        #expect(try daemon.runCommand(["apps", "approvals", Self.app, "--require", "flags"]).status != 0, "an unknown kind")
        let hook = try run(["alerts", "hooks", "add", Self.app, "--url", "http://127.0.0.1:9/hook/SECRETPATH"])
        let hookID = try #require(try run(["alerts", "hooks", "list", Self.app]).split(separator: "\t").first.map(String.init))
        let rule = try run(["alerts", "rules", "add", Self.app, "--condition", "test_crashes", "--hook", hookID])
        _ = try run(["alerts", "rules", "remove", Self.app, rule])
        _ = try run(["alerts", "hooks", "remove", Self.app, hookID])
        _ = try run(["releases", "add", Self.app, "2.0", "7"])
        _ = try run(["releases", "remove", Self.app, "2.0", "7"])
        _ = try run(["releases", "add", Self.app, "3.0", "8"])
        _ = try run(["releases", "delete", Self.app, "3.0", "8", "--yes"])
        _ = try run(["tokens", "revoke", tokenID])

        let all = Self.rows(try run(["audit"]))
        let seen = all.reversed().map { "\($0["action"] as? String ?? "?") \($0["app"] as? String ?? "-")" }
        #expect(seen == [
            "app.add \(Self.app)", "admission.save \(Self.app)", "key.add \(Self.app)", "token.add -", "key.add \(Self.app)",
            "admission.save \(Self.app)", "attestation.save \(Self.app)", "attestation.save \(Self.app)", "approvals.save \(Self.app)",
            "alert.hook.add \(Self.app)", "alert.rule.add \(Self.app)", "alert.rule.delete \(Self.app)", "alert.hook.delete \(Self.app)",
            "release.declare \(Self.app)", "release.unlist \(Self.app)", "release.declare \(Self.app)", "release.delete \(Self.app)", "token.revoke -",
        ], "\(seen.joined(separator: "\n"))")
        #expect(all.allSatisfy { ($0["actor"] as? String)?.hasPrefix("cli:") == true && $0["address"] as? String == "local" })
        // The attestation rows hold the settings saved; approvals' the kinds.
        let attestation = all.filter { $0["action"] as? String == "attestation.save" }.compactMap { ($0["after"] as? [String: Any])?["mode"] as? String }
        #expect(attestation == ["require", "observe"], "\(attestation)")
        let kinds = all.first { $0["action"] as? String == "approvals.save" }.flatMap { ($0["after"] as? [String: Any])?["require"] as? [String] }
        #expect(kinds == ["test_crash", "rollouts"])
        let everything = try run(["audit"])
        for secret in [token, String(token.suffix(64)), hook, "SECRETPATH"] { #expect(!everything.contains(secret)) }
        // The same rows through the API, filtered by action as the API's own rows are.
        let admin = try daemon.addToken(role: "admin", name: "root")
        let api = try daemon.client.request("GET", "/v1/admin/audit?action=attestation.save&app=\(Self.app)", token: admin)
        #expect((api.json["entries"] as? [Any])?.count == 2, "\(api.text)")
    }
}
