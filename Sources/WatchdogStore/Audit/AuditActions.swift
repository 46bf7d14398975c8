/// The audit log's action names: one dotted `noun.verb` scheme whichever way a change was
/// made (the API, the dashboard, the CLI, the rollout guard), so a filter by action finds it.
/// docs/api.md lists them.
public enum AuditActions {
    /// The action of a change made through a route, by `METHOD template`. A route missing here
    /// is audited under its `METHOD template` (RouteScopeTests fails on such a route).
    public static let routes: [String: String] = [
        "POST /v1/admin/apps": "app.add",
        "POST /v1/admin/apps/{app}/keys": "key.add",
        "DELETE /v1/admin/apps/{app}/keys/{key_id}": "key.revoke",
        "PUT /v1/admin/apps/{app}/config": "config.update",
        "PATCH /v1/admin/apps/{app}/config": "config.update",
        "POST /v1/admin/apps/{app}/config/rollback": "config.rollback",
        "POST /v1/admin/apps/{app}/releases": "release.declare",
        "POST /v1/admin/apps/{app}/releases/{release}/admit": "release.admit",
        "DELETE /v1/admin/apps/{app}/releases/{release}/listing": "release.unlist",
        "DELETE /v1/admin/apps/{app}/releases/{release}": "release.delete",
        "PUT /v1/admin/apps/{app}/admission": "admission.save",
        "PUT /v1/admin/apps/{app}/attestation": "attestation.save",
        "PUT /v1/admin/apps/{app}/approvals": "approvals.save",
        "POST /v1/admin/apps/{app}/proposals/{id}/approve": "proposal.approve",
        "POST /v1/admin/apps/{app}/proposals/{id}/refuse": "proposal.refuse",
        "POST /v1/admin/apps/{app}/alerts/rules": "alert.rule.add",
        "DELETE /v1/admin/apps/{app}/alerts/rules/{id}": "alert.rule.delete",
        "POST /v1/admin/apps/{app}/alerts/hooks": "alert.hook.add",
        "DELETE /v1/admin/apps/{app}/alerts/hooks/{id}": "alert.hook.delete",
        "POST /v1/admin/apps/{app}/alerts/hooks/{id}/test": "alert.hook.test",
        "POST /v1/admin/apps/{app}/alerts/hooks/{id}/digest": "alert.hook.digest",
        "POST /v1/admin/apps/{app}/rollouts": "rollout.start",
        "POST /v1/apps/{app}/issues/{fingerprint}/resolve": "issue.resolve",
        "POST /v1/apps/{app}/issues/{fingerprint}/mute": "issue.mute",
        "POST /v1/apps/{app}/issues/{fingerprint}/reopen": "issue.reopen",
        "POST /v1/auth/links": "signin.link",
        "POST /v1/auth/logout": "signin.logout",
    ]

    /// Rollout steps by hand: `rollout.pause`, `rollout.resume`, `rollout.advance`, `rollout.abort`.
    public static let rolloutStepTemplate = "POST /v1/admin/apps/{app}/rollouts/{rule}/{action}"
    public static let rolloutSteps: Set<String> = ["pause", "resume", "advance", "abort"]

    /// The action of a call of a route (`method`, `template`) with these path parameters.
    public static func name(method: String, template: String, parameters: [String: String]) -> String {
        let key = "\(method) \(template)"
        if key == rolloutStepTemplate, let step = parameters["action"], rolloutSteps.contains(step) { return "rollout.\(step)" }
        return routes[key] ?? key
    }

    /// What rows written before 2026-11-28 were called (`METHOD template`) and are called now,
    /// applied to them by the migration `2026-11-28-audit-actions` on both stores. A rollout
    /// step of then did not record which step: `rollout.step`. Frozen: a migration that shipped
    /// is never edited.
    public static let renamedOnMigration: [(old: String, new: String)] = [
        ("POST /v1/admin/apps", "app.add"),
        ("POST /v1/admin/apps/{app}/keys", "key.add"),
        ("DELETE /v1/admin/apps/{app}/keys/{key_id}", "key.revoke"),
        ("PUT /v1/admin/apps/{app}/config", "config.update"),
        ("PATCH /v1/admin/apps/{app}/config", "config.update"),
        ("POST /v1/admin/apps/{app}/config/rollback", "config.rollback"),
        ("POST /v1/admin/apps/{app}/releases", "release.declare"),
        ("POST /v1/admin/apps/{app}/releases/{release}/admit", "release.admit"),
        ("DELETE /v1/admin/apps/{app}/releases/{release}/listing", "release.unlist"),
        ("DELETE /v1/admin/apps/{app}/releases/{release}", "release.delete"),
        ("PUT /v1/admin/apps/{app}/admission", "admission.save"),
        ("PUT /v1/admin/apps/{app}/attestation", "attestation.save"),
        ("POST /v1/admin/apps/{app}/alerts/rules", "alert.rule.add"),
        ("DELETE /v1/admin/apps/{app}/alerts/rules/{id}", "alert.rule.delete"),
        ("POST /v1/admin/apps/{app}/alerts/hooks", "alert.hook.add"),
        ("DELETE /v1/admin/apps/{app}/alerts/hooks/{id}", "alert.hook.delete"),
        ("POST /v1/admin/apps/{app}/alerts/hooks/{id}/test", "alert.hook.test"),
        ("POST /v1/admin/apps/{app}/rollouts", "rollout.start"),
        ("POST /v1/admin/apps/{app}/rollouts/{rule}/{action}", "rollout.step"),
        ("POST /v1/auth/links", "signin.link"),
        ("POST /v1/auth/logout", "signin.logout"),
    ]

    /// The SQL of that renaming (both stores take the same statement: literals only).
    public static var renameSQL: String {
        let cases = renamedOnMigration.map { "WHEN '\($0.old)' THEN '\($0.new)'" }.joined(separator: " ")
        let olds = renamedOnMigration.map { "'\($0.old)'" }.joined(separator: ", ")
        return "UPDATE audit_log SET action = CASE action \(cases) END WHERE action IN (\(olds));"
    }
}
