import Foundation
import Testing
import WatchdogStore
import WatchdogTesting

extension FourEyesTests {
    static func autoFix(_ app: TestApplication, _ token: String) throws -> Bool {
        let config = try call(app, "GET", "\(base)/config", token)
        return (config.json["defaults"] as? [String: Any])?["auto_fix"] as? Bool == true
    }

    /// A node that stops between claiming an approval (`applying`) and recording its outcome
    /// leaves the proposal `applying`. After two minutes it is settled from the audit log: the
    /// change's row names the proposal when the change was made (`approved`), and there is no
    /// such row when it was not (`failed`, to be proposed again) — never "applying" forever.
    @Test func aProposalLeftApplyingByAStoppedNodeIsSettledFromTheAuditLog() throws {
        let (app, people) = try Self.start(requiring: ["config", "test_crash"])
        // Stopped after the change: approved, then put back to where a crash would have left it.
        let made = try Self.proposalID(try Self.call(app, "PATCH", "\(Self.base)/config", people.olga, #"{"test_crash": true}"#))
        #expect(try Self.call(app, "POST", "\(Self.base)/proposals/\(made)/approve", people.oscar).status == 200)
        #expect(try app.store.decideProposal(app: Self.app, id: made, ProposalDecision(from: "approved", to: "applying", decidedBy: "oscar", at: app.clock.now)))
        // Stopped before the change: claimed, nothing applied.
        let lost = try Self.proposalID(try Self.call(app, "PATCH", "\(Self.base)/config", people.olga, #"{"auto_fix": true}"#))
        #expect(try app.store.decideProposal(app: Self.app, id: lost, ProposalDecision(from: "pending", to: "applying", decidedBy: "oscar", at: app.clock.now)))

        func statuses() throws -> [String: [String: Any]] {
            let list = try Self.call(app, "GET", "\(Self.base)/proposals", people.viewer)
            return Dictionary(uniqueKeysWithValues: ((list.json["proposals"] as? [[String: Any]]) ?? []).map { ($0["id"] as? String ?? "", $0) })
        }
        // Within the grace a node may still be applying them: left as they are.
        app.clock.advance(seconds: 60)
        #expect(try statuses()[made]?["status"] as? String == "applying")
        #expect(try statuses()[lost]?["status"] as? String == "applying")

        app.clock.advance(seconds: 61)
        let settled = try statuses()
        #expect(settled[made]?["status"] as? String == "approved", "\(settled[made] ?? [:])")
        #expect((settled[made]?["outcome"] as? String)?.contains("settled from the audit log") == true, "\(settled[made] ?? [:])")
        #expect(settled[lost]?["status"] as? String == "failed", "\(settled[lost] ?? [:])")
        #expect((settled[lost]?["outcome"] as? String)?.contains("propose it again") == true, "\(settled[lost] ?? [:])")
        #expect(try Self.testCrash(app, people.admin) == true)
        #expect(try Self.autoFix(app, people.admin) == false, "the lost change was never applied")
        // Settled once: approving the failed one is refused, not applied late.
        #expect(try Self.call(app, "POST", "\(Self.base)/proposals/\(lost)/approve", people.oscar).status == 409)
        #expect(try Self.autoFix(app, people.admin) == false)
    }
}
