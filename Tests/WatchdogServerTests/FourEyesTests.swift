import Foundation
import Testing
import WatchdogTesting

/// Four eyes (issue 41, point 3): on an app that requires approval for a kind of change, the
/// change is proposed (202, not applied) with its dry run's impact, and applied only when a
/// different person with the role it needs approves it within 24 hours; refusals, approvals and
/// proposals are audit rows. Runs on the suite's store (SQLite, or PostgreSQL).
@Suite struct FourEyesTests {
    static let app = "com.example.mail"
    static let base = "/v1/admin/apps/com.example.mail"

    struct People {
        let admin: String
        let olga: String
        let oscar: String
        let viewer: String
    }

    static func start(requiring kinds: [String]) throws -> (TestApplication, People) {
        let app = try TestApplication()
        _ = try app.addApp(Self.app)
        let people = People(admin: try app.addToken(role: "admin", name: "alice"), olga: try app.addToken(role: "operator", name: "olga"),
                            oscar: try app.addToken(role: "operator", name: "oscar"), viewer: try app.addToken(role: "viewer", name: "vera"))
        let body = Array(try JSONSerialization.data(withJSONObject: ["require": kinds]))
        let saved = try app.client.request("PUT", "\(base)/approvals", token: people.admin, body: body)
        #expect(saved.status == 200, "\(saved.text)")
        return (app, people)
    }

    static func call(_ app: TestApplication, _ method: String, _ path: String, _ token: String, _ body: String = "") throws -> TestResponse {
        try app.client.request(method, path, token: token, body: Array(body.utf8))
    }

    static func testCrash(_ app: TestApplication, _ token: String) throws -> Bool {
        let config = try call(app, "GET", "\(base)/config", token)
        return (config.json["defaults"] as? [String: Any])?["test_crash"] as? Bool == true
    }

    static func proposalID(_ response: TestResponse) throws -> String {
        #expect(response.status == 202, "\(response.text)")
        #expect(response.json["applied"] as? Bool == false)
        #expect((response.json["message"] as? String)?.contains("not applied") == true, "\(response.text)")
        return try #require((response.json["proposal"] as? [String: Any])?["id"] as? String, "\(response.text)")
    }

    @Test func aTestCrashSwitchIsProposedAndAppliedOnlyWhenAnotherPersonApprovesIt() throws {
        let (app, people) = try Self.start(requiring: ["test_crash"])
        // A config change that turns no test_crash on is not gated.
        #expect(try Self.call(app, "PATCH", "\(Self.base)/config", people.olga, #"{"auto_fix": true}"#).status == 200)
        let id = try Self.proposalID(try Self.call(app, "PATCH", "\(Self.base)/config", people.olga, #"{"test_crash": true}"#))
        #expect(try Self.testCrash(app, people.admin) == false, "a proposal is not applied")
        // Listed with its dry run's impact and the document it would save.
        let list = try Self.call(app, "GET", "\(Self.base)/proposals?status=pending", people.viewer)
        let proposal = try #require((list.json["proposals"] as? [[String: Any]])?.first, "\(list.text)")
        #expect(proposal["id"] as? String == id && proposal["proposer"] as? String == "olga" && proposal["action"] as? String == "config.update")
        #expect(proposal["kinds"] as? [String] == ["config", "test_crash"])
        let impact = try #require(proposal["impact"] as? [String: Any], "\(proposal)")
        #expect(impact["dry_run"] as? Bool == true && ((impact["document"] as? [String: Any])?["defaults"] as? [String: Any])?["test_crash"] as? Bool == true)
        // The proposer cannot approve it; a viewer cannot; another operator can, once.
        let own = try Self.call(app, "POST", "\(Self.base)/proposals/\(id)/approve", people.olga)
        #expect(own.status == 403 && own.text.contains("another person"), "\(own.text)")
        #expect(try Self.call(app, "POST", "\(Self.base)/proposals/\(id)/approve", people.viewer).status == 403)
        #expect(try Self.testCrash(app, people.admin) == false)
        let approved = try Self.call(app, "POST", "\(Self.base)/proposals/\(id)/approve", people.oscar)
        #expect(approved.status == 200 && approved.json["applied"] as? Bool == true, "\(approved.text)")
        #expect(try Self.testCrash(app, people.admin) == true)
        let history = try Self.call(app, "GET", "\(Self.base)/config/history", people.admin)
        #expect(history.text.contains("olga"), "the change is the proposer's: \(history.text)")
        #expect(try Self.call(app, "POST", "\(Self.base)/proposals/\(id)/approve", people.oscar).status == 409, "applied once")
        // Audited: the proposal by olga, the approval by oscar, the change by olga approved by oscar.
        let rows = try AuditLogTests.rows(app, token: people.admin, query: "app=\(Self.app)")
        let seen = rows.map { "\($0["action"] as? String ?? "?") \($0["actor"] as? String ?? "?")" }
        #expect(seen == ["approvals.save alice", "config.update olga", "proposal.create olga", "proposal.approve oscar", "config.update olga"], "\(seen)")
        let change = try #require((rows.last?["after"] as? [String: Any])?["approval"] as? [String: Any], "\(rows.last ?? [:])")
        #expect(change["approved_by"] as? String == "oscar" && change["proposal"] as? String == id, "\(change)")
        let approval = try #require(rows[3]["after"] as? [String: Any])
        #expect(approval["proposal"] as? String == id && approval["proposer"] as? String == "olga", "\(approval)")
    }

    @Test func anExpiredProposalIsNeverAppliedAndOneJustBeforeItsExpiryIs() throws {
        let (app, people) = try Self.start(requiring: ["config"])
        let late = try Self.proposalID(try Self.call(app, "PATCH", "\(Self.base)/config", people.olga, #"{"test_crash": true}"#))
        app.clock.advance(milliseconds: 24 * 3_600_000)
        let expired = try Self.call(app, "POST", "\(Self.base)/proposals/\(late)/approve", people.oscar)
        #expect(expired.status == 409 && (expired.json["error"] as? [String: Any])?["code"] as? String == "proposal_expired", "\(expired.text)")
        #expect(try Self.testCrash(app, people.admin) == false)
        let listed = try Self.call(app, "GET", "\(Self.base)/proposals", people.admin)
        #expect((listed.json["proposals"] as? [[String: Any]])?.first?["status"] as? String == "expired", "\(listed.text)")
        #expect(try Self.call(app, "POST", "\(Self.base)/proposals/\(late)/refuse", people.oscar).status == 409)
        let inTime = try Self.proposalID(try Self.call(app, "PATCH", "\(Self.base)/config", people.olga, #"{"test_crash": true}"#))
        app.clock.advance(milliseconds: 24 * 3_600_000 - 1)
        #expect(try Self.call(app, "POST", "\(Self.base)/proposals/\(inTime)/approve", people.oscar).status == 200)
        #expect(try Self.testCrash(app, people.admin) == true)
    }

    @Test func aRefusedProposalIsNeverAppliedAndTheRefusalIsAudited() throws {
        let (app, people) = try Self.start(requiring: ["config"])
        let id = try Self.proposalID(try Self.call(app, "PATCH", "\(Self.base)/config", people.olga, #"{"test_crash": true}"#))
        #expect(try Self.call(app, "POST", "\(Self.base)/proposals/\(id)/refuse", people.oscar, #"{"reason": 7}"#).status == 400)
        let refused = try Self.call(app, "POST", "\(Self.base)/proposals/\(id)/refuse", people.oscar, #"{"reason": "<b>not on a Friday</b>"}"#)
        #expect(refused.status == 200 && (refused.json["proposal"] as? [String: Any])?["status"] as? String == "refused", "\(refused.text)")
        #expect(try Self.call(app, "POST", "\(Self.base)/proposals/\(id)/approve", people.admin).status == 409)
        #expect(try Self.testCrash(app, people.admin) == false)
        let row = try #require(try AuditLogTests.rows(app, token: people.admin, query: "action=proposal.refuse").first)
        #expect(row["actor"] as? String == "oscar" && (row["after"] as? [String: Any])?["reason"] as? String == "<b>not on a Friday</b>", "\(row)")
    }

    @Test func aConfigProposalAppliesToTheDocumentItWasProposedAgainstOrFails() throws {
        let (app, people) = try Self.start(requiring: ["test_crash"])
        let id = try Self.proposalID(try Self.call(app, "PATCH", "\(Self.base)/config", people.olga, #"{"test_crash": true}"#))
        // Another change comes first: the approval would apply to a document nobody reviewed.
        #expect(try Self.call(app, "PATCH", "\(Self.base)/config", people.admin, #"{"auto_fix": true}"#).status == 200)
        let approved = try Self.call(app, "POST", "\(Self.base)/proposals/\(id)/approve", people.oscar)
        #expect(approved.status == 409 && (approved.json["error"] as? [String: Any])?["code"] as? String == "proposal_failed", "\(approved.text)")
        #expect(try Self.testCrash(app, people.admin) == false)
        let listed = try Self.call(app, "GET", "\(Self.base)/proposals?status=failed", people.admin)
        #expect((listed.json["proposals"] as? [[String: Any]])?.count == 1, "\(listed.text)")
    }

    @Test func rolloutsAttestationRequireAndReleaseDeletesAreProposedWhenRequired() throws {
        let (app, people) = try Self.start(requiring: ["rollouts", "attestation", "release_delete"])
        #expect(try Self.call(app, "PUT", "\(Self.base)/config", people.admin, #"{"rules": [{"id": "fix", "match": {"percent": 0}, "set": {"auto_fix": true}}]}"#).status == 200)
        let rollout = try Self.proposalID(try Self.call(app, "POST", "\(Self.base)/rollouts", people.olga, #"{"rule": "fix"}"#))
        #expect((try Self.call(app, "GET", "\(Self.base)/rollouts", people.admin).json["rollouts"] as? [Any])?.isEmpty ?? true)
        // Attestation: observe is not gated, require is; approving it needs an admin.
        #expect(try Self.call(app, "PUT", "\(Self.base)/attestation", people.admin, #"{"mode": "observe", "team_id": "ABCDE12345", "bundle_id": "com.example.mail"}"#).status == 200)
        let require = try Self.proposalID(try Self.call(app, "PUT", "\(Self.base)/attestation", people.admin,
                                                        #"{"mode": "require", "team_id": "ABCDE12345", "bundle_id": "com.example.mail"}"#))
        #expect(try Self.call(app, "POST", "\(Self.base)/proposals/\(require)/approve", people.oscar).status == 403, "an operator cannot approve an admin's change")
        let second = try app.addToken(role: "admin", name: "bob")
        #expect(try Self.call(app, "POST", "\(Self.base)/proposals/\(require)/approve", second).status == 200)
        #expect(try Self.call(app, "GET", "\(Self.base)/attestation", people.viewer).json["mode"] as? String == "require")
        // A release delete: its impact is what the route says deleting removes.
        let declared = try Self.call(app, "POST", "\(Self.base)/releases", people.olga, #"{"version": "2.0", "build": "7"}"#)
        let release = try #require(declared.json["id"] as? String, "\(declared.text)")
        #expect(try Self.call(app, "DELETE", "\(Self.base)/releases/\(release)", people.olga).status == 400, "unconfirmed: the route's own answer")
        let delete = try Self.call(app, "DELETE", "\(Self.base)/releases/\(release)?confirm=\(release)", people.olga)
        let deleteID = try Self.proposalID(delete)
        let impact = (delete.json["proposal"] as? [String: Any])?["impact"] as? [String: Any]
        #expect((impact?["summary"] as? String)?.contains("removes") == true, "\(delete.text)")
        #expect(try Self.call(app, "POST", "\(Self.base)/proposals/\(deleteID)/approve", people.oscar).status == 200)
        #expect(try Self.call(app, "GET", "/v1/apps/\(Self.app)/releases", people.admin).text.contains(release) == false)
        #expect(try Self.call(app, "POST", "\(Self.base)/proposals/\(rollout)/approve", people.oscar).status == 200)
        #expect(try Self.call(app, "GET", "\(Self.base)/rollouts/fix", people.admin).status == 200)
    }

    @Test func approvalSettingsAreAdminsToChangeAndRefuseUnknownKinds() throws {
        let (app, people) = try Self.start(requiring: [])
        #expect(try Self.call(app, "PATCH", "\(Self.base)/config", people.olga, #"{"test_crash": true}"#).status == 200, "off by default")
        let bad = try Self.call(app, "PUT", "\(Self.base)/approvals", people.admin, #"{"require": ["flags"]}"#)
        #expect(bad.status == 400 && bad.text.contains("test_crash"), "\(bad.text)")
        #expect(try Self.call(app, "PUT", "\(Self.base)/approvals", people.olga, #"{"require": ["config"]}"#).status == 403)
        let shown = try Self.call(app, "GET", "\(Self.base)/approvals", people.viewer)
        #expect(shown.status == 200 && (shown.json["require"] as? [String])?.isEmpty == true, "\(shown.text)")
        #expect(try Self.call(app, "GET", "/v1/admin/apps/com.example.none/proposals", people.admin).status == 404)
        #expect(try Self.call(app, "POST", "\(Self.base)/proposals/prp_0000/approve", people.oscar).status == 404)
    }

    @Test func anAppHoldsAtMostAHundredWaitingProposals() throws {
        let (app, people) = try Self.start(requiring: ["config"])
        var first = ""
        for seconds in 1...100 {
            let id = try Self.proposalID(try Self.call(app, "PATCH", "\(Self.base)/config", people.olga, #"{"watchdog_interval_s": \#(seconds)}"#))
            if first.isEmpty { first = id }
        }
        let refused = try Self.call(app, "PATCH", "\(Self.base)/config", people.olga, #"{"watchdog_interval_s": 101}"#)
        #expect(refused.status == 409 && (refused.json["error"] as? [String: Any])?["code"] as? String == "too_many_proposals", "\(refused.text)")
        #expect(try Self.call(app, "POST", "\(Self.base)/proposals/\(first)/refuse", people.oscar).status == 200)
        #expect(try Self.call(app, "PATCH", "\(Self.base)/config", people.olga, #"{"watchdog_interval_s": 101}"#).status == 202)
        // Expired ones no longer count.
        app.clock.advance(milliseconds: 24 * 3_600_000)
        #expect(try Self.call(app, "PATCH", "\(Self.base)/config", people.olga, #"{"watchdog_interval_s": 102}"#).status == 202)
    }
}
