import Foundation
import Testing
import WatchdogStore
import WatchdogTesting
@testable import WatchdogServer

/// A guarded rollout's step is two saves — the step as `pending`, then its config version and
/// the step recorded. A process that dies between them leaves `pending`; the next pass after a
/// restart finishes it, once.
@Suite struct RolloutDurabilityTests {
    static let app = "com.example.mail"
    static let plan = RolloutPlan(steps: [10, 100], minimumSessions: 100, minimumHours: 6, guard: RolloutGuard(overall: true, kinds: []))

    /// An app whose config has the rule `fix` at `percent`, and an admin token named alice.
    static func setUp(percent: Double) throws -> (TestApplication, String) {
        let app = try TestApplication()
        _ = try app.addApp(Self.app)
        let admin = try app.addToken(role: "admin", name: "alice")
        let body = Array(#"{"rules": [{"id": "fix", "match": {"percent": \#(percent)}, "set": {"auto_fix": true}}]}"#.utf8)
        #expect(try app.client.request("PUT", "/v1/admin/apps/\(Self.app)/config", token: admin, body: body).status == 200)
        return (app, admin)
    }

    /// Stores a rollout whose `started` step is pending, as a crash after the first save leaves it.
    static func storePending(_ app: TestApplication) throws {
        let rollout = RolloutMachine.start(app: Self.app, rule: "fix", plan: Self.plan, fromPercent: 0, actor: "alice", now: app.clock.now)
        let document = String(decoding: try RolloutService.encoder.encode(rollout), as: UTF8.self)
        #expect(try app.store.saveRollout(RolloutRecord(app: Self.app, ruleID: "fix", revision: 0, status: "active", document: document, updatedAt: app.clock.now),
                                          expectedRevision: 0))
    }

    static func versions(_ app: TestApplication, _ admin: String) throws -> [[String: Any]] {
        try app.client.request("GET", "/v1/admin/apps/\(Self.app)/config/history", token: admin).json["history"] as? [[String: Any]] ?? []
    }

    @Test func aStepLeftPendingByACrashIsAppliedOnceAfterTheRestart() throws {
        let (app, admin) = try Self.setUp(percent: 0)
        try Self.storePending(app)
        try app.restart()
        try app.application.evaluateRollouts()
        try app.application.evaluateRollouts()
        let rollout = try app.client.request("GET", "/v1/admin/apps/\(Self.app)/rollouts/fix", token: admin).json
        #expect(rollout["percent"] as? Double == 10 && rollout["pending"] == nil)
        let history = rollout["history"] as? [[String: Any]] ?? []
        #expect(history.map { $0["action"] as? String } == ["started"] && history.first?["config_version"] as? Int == 2)
        let versions = try Self.versions(app, admin)
        #expect(versions.compactMap { $0["version"] as? Int } == [2, 1], "one version for the step, however many passes")
        #expect(versions.first?["changed_by"] as? String == "alice" && (versions.first?["note"] as? String ?? "").hasPrefix("rollout of rule fix: started 0 % → 10 %"))
        try app.stop()
    }

    @Test func aCrashAfterTheConfigVersionMakesNoSecondVersion() throws {
        // The config already has the step's percentage (the crash came after its version).
        let (app, admin) = try Self.setUp(percent: 10)
        try Self.storePending(app)
        try app.restart()
        try app.application.evaluateRollouts()
        let rollout = try app.client.request("GET", "/v1/admin/apps/\(Self.app)/rollouts/fix", token: admin).json
        #expect(rollout["status"] as? String == "active" && rollout["percent"] as? Double == 10)
        #expect((rollout["history"] as? [[String: Any]])?.first?["config_version"] as? Int == 1)
        #expect(try Self.versions(app, admin).count == 1)
        try app.stop()
    }
}
