import GRDB
import Testing
@testable import WatchdogStore

/// One scheme of audit action names (issue 41): rows written before it, named `METHOD
/// template`, are renamed by the migration `2026-11-28-audit-actions` — the statement both
/// stores run — so a filter by action finds old and new rows alike.
@Suite struct AuditActionNamesTests {
    @Test func theMigrationRenamesOldRouteRowsAndLeavesEveryOtherRowAlone() throws {
        let db = try DatabaseQueue()
        try db.write { db in
            try db.execute(sql: "CREATE TABLE audit_log (id INTEGER PRIMARY KEY, action TEXT NOT NULL)")
            for action in ["PATCH /v1/admin/apps/{app}/config", "POST /v1/admin/apps/{app}/rollouts/{rule}/{action}", "DELETE /v1/admin/apps/{app}/releases/{release}",
                           "token.add", "signin.failed", "rollout.guard.aborted", "POST /v1/admin/apps/{app}/unknown"] {
                try db.execute(sql: "INSERT INTO audit_log (action) VALUES (?)", arguments: [action])
            }
            try db.execute(sql: AuditActions.renameSQL)
        }
        let actions = try db.read { db in try String.fetchAll(db, sql: "SELECT action FROM audit_log ORDER BY id") }
        #expect(actions == ["config.update", "rollout.step", "release.delete", "token.add", "signin.failed", "rollout.guard.aborted", "POST /v1/admin/apps/{app}/unknown"])
    }

    @Test func bothStoresRegisterTheMigrations() {
        let postgres = PostgresMigrations.all.map(\.identifier)
        let approvals = postgres.firstIndex(of: "2026-11-28-approvals") ?? postgres.endIndex
        #expect(Array(postgres[approvals...].prefix(3)) == ["2026-11-28-approvals", "2026-11-28-audit-actions", "2026-11-28-refusals"])
        var migrator = DatabaseMigrator()
        Migrations.registerApprovals(&migrator)
        Migrations.registerRefusals(&migrator)
        #expect(migrator.migrations == ["2026-11-28-approvals", "2026-11-28-audit-actions", "2026-11-28-refusals"])
    }

    @Test func aRouteStepIsNamedByItsStepAndEveryOldNameMapsToTheCurrentOne() {
        let template = "/v1/admin/apps/{app}/rollouts/{rule}/{action}"
        #expect(AuditActions.name(method: "POST", template: template, parameters: ["action": "abort"]) == "rollout.abort")
        #expect(AuditActions.name(method: "POST", template: template, parameters: ["action": "<b>"]) == AuditActions.rolloutStepTemplate)
        for (old, new) in AuditActions.renamedOnMigration where old != AuditActions.rolloutStepTemplate {
            #expect(AuditActions.routes[old] == new, "\(old)")
        }
    }
}
