import Foundation
import Testing
import WatchdogStore
import WatchdogTesting

/// Roles per app (issue 41): every route of the route table, called by an admin token limited
/// to another app, refuses — a route cannot forget its app check, since the walk takes the
/// table as the application serves it.
@Suite struct RouteScopeTests {
    /// The app the walking token may not see; its name must never reach that token.
    static let hidden = "com.hidden.alpha"
    /// The walking token's own app.
    static let mine = "com.example.mine"
    /// An app that does not exist: out-of-scope answers must be the same as for it.
    static let missing = "com.missing.zeta"
    /// The routes anyone may call without a credential (they touch no app's data). A new open
    /// route fails `everyOutOfScopeRouteRefusesATokenOfAnotherApp` until it is listed here.
    static let openRoutes: Set<String> = [
        "GET /", "GET /openapi.yaml", "GET /docs/api", "GET /login", "POST /login", "GET /dashboard/{*path}", "GET /assets/chart.js/{*path}",
        "POST /v1/auth/login", "GET /healthz", "GET /metrics", "GET /readyz",
        // OpenID Connect sign-in: the way in, touching no app.
        "GET /v1/auth/oidc", "GET /auth/oidc/start", "GET /auth/oidc/callback",
    ]

    /// The hidden app's data, made through the API by an every-app admin: a report, a declared
    /// release, a config rule under a rollout, an alert hook and rule, a second ingest key.
    struct HiddenData {
        var reportID = ""
        var release = ""
        var hook = ""
        var rule = ""
        var keyID = ""
        var proposal = ""
    }

    static func makeHiddenData(_ app: TestApplication, admin: String) throws -> HiddenData {
        var data = HiddenData()
        let key = try app.addApp(hidden)
        _ = try app.addApp(mine)
        var report = try Fixtures.freshReport(app: hidden)
        data.reportID = try #require(report["id"] as? String)
        report["session_id"] = "S-hidden"
        #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": [report]]).status == 202)
        let declared = try app.client.postJSON("/v1/admin/apps/\(hidden)/releases", token: admin, json: ["version": "14.2.0", "build": "31245"])
        data.release = try #require(declared.json["id"] as? String, "\(declared.text)")
        let config = Array(#"{"rules": [{"id": "fix", "match": {"percent": 0}, "set": {"auto_fix": true}}]}"#.utf8)
        #expect(try app.client.request("PUT", "/v1/admin/apps/\(hidden)/config", token: admin, body: config).status == 200)
        let rollout = try app.client.postJSON("/v1/admin/apps/\(hidden)/rollouts", token: admin, json: ["rule": "fix"])
        #expect(rollout.status == 201 || rollout.status == 200, "\(rollout.text)")
        let hook = try app.client.postJSON("/v1/admin/apps/\(hidden)/alerts/hooks", token: admin, json: ["url": "https://hooks.example.com/alpha"])
        data.hook = try #require(hook.json["id"] as? String, "\(hook.text)")
        let rule = try app.client.postJSON("/v1/admin/apps/\(hidden)/alerts/rules", token: admin, json: ["condition": "test_crashes", "hook": data.hook])
        data.rule = try #require(rule.json["id"] as? String, "\(rule.text)")
        let newKey = try app.client.postJSON("/v1/admin/apps/\(hidden)/keys", token: admin, json: [:] as [String: Any])
        data.keyID = try #require((newKey.json["id"] ?? newKey.json["key_id"]) as? String, "\(newKey.text)")
        // A proposal waiting for approval (four eyes): deleting a second release.
        #expect(try app.client.request("PUT", "/v1/admin/apps/\(hidden)/approvals", token: admin, body: Array(#"{"require": ["release_delete"]}"#.utf8)).status == 200)
        let second = try app.client.postJSON("/v1/admin/apps/\(hidden)/releases", token: admin, json: ["version": "14.1.0", "build": "30000"])
        let secondID = try #require(second.json["id"] as? String, "\(second.text)")
        let proposed = try app.client.request("DELETE", "/v1/admin/apps/\(hidden)/releases/\(secondID)?confirm=\(secondID)", token: admin)
        data.proposal = try #require((proposed.json["proposal"] as? [String: Any])?["id"] as? String, "\(proposed.text)")
        return data
    }

    /// A route's template made concrete for the hidden app's data (`app`: the app put in it).
    static func concrete(_ template: String, app: String, data: HiddenData) -> String {
        var path = template.replacingOccurrences(of: "{app}", with: app).replacingOccurrences(of: "{release}", with: data.release)
            .replacingOccurrences(of: "{key_id}", with: data.keyID).replacingOccurrences(of: "{version}", with: "1")
            .replacingOccurrences(of: "{rule}", with: "fix").replacingOccurrences(of: "{action}", with: "pause")
        if template.contains("/proposals/") { path = path.replacingOccurrences(of: "{id}", with: data.proposal) }
        if template.contains("/alerts/rules/") { path = path.replacingOccurrences(of: "{id}", with: data.rule) }
        if template.contains("/alerts/hooks/") { path = path.replacingOccurrences(of: "{id}", with: data.hook) }
        path = path.replacingOccurrences(of: "{id}", with: data.reportID)
        if template == "/v1/config" { path += "?app=\(app)" }
        return path
    }

    /// A body each changing route would accept from a caller allowed to call it.
    static func body(_ method: String, _ template: String, data: HiddenData) -> [UInt8] {
        guard method != "GET", method != "DELETE" else { return [] }
        let json: String
        switch template {
        case "/v1/admin/apps": json = #"{"app": "com.new.app"}"#
        case "/v1/admin/apps/{app}/releases": json = #"{"version": "14.3.0", "build": "1"}"#
        case "/v1/admin/apps/{app}/alerts/hooks": json = #"{"url": "https://hooks.example.com/beta"}"#
        case "/v1/admin/apps/{app}/alerts/rules": json = #"{"condition": "test_crashes", "hook": "\#(data.hook)"}"#
        case "/v1/admin/apps/{app}/config/rollback": json = #"{"version": 1}"#
        case "/v1/admin/apps/{app}/rollouts": json = #"{"rule": "fix"}"#
        case "/v1/admin/apps/{app}/admission": json = #"{"mode": "open"}"#
        case "/v1/admin/apps/{app}/attestation": json = #"{"mode": "off"}"#
        case "/v1/admin/apps/{app}/approvals": json = #"{"require": ["release_delete"]}"#
        case "/v1/admin/apps/{app}/proposals/{id}/approve", "/v1/admin/apps/{app}/proposals/{id}/refuse": json = "{}"
        case "/v1/admin/apps/{app}/rollouts/{rule}/{action}", "/v1/admin/apps/{app}/keys", "/v1/admin/apps/{app}/alerts/hooks/{id}/test": json = "{}"
        default: json = #"{"test_crash": true}"#
        }
        return Array(json.utf8)
    }

    @Test func everyOutOfScopeRouteRefusesATokenOfAnotherApp() throws {
        let app = try TestApplication()
        let admin = try app.addToken(role: "admin", name: "root")
        let data = try Self.makeHiddenData(app, admin: admin)
        let outsider = try app.addToken(role: "admin", name: "mine-admin", apps: [Self.mine])
        let insider = try app.addToken(role: "admin", name: "alpha-admin", apps: [Self.hidden])
        let secrets = [Self.hidden, data.reportID, data.hook, data.rule, data.keyID, data.proposal]
        var walked = 0
        for (template, methods) in app.application.endpoints {
            for method in methods {
                let name = "\(method) \(template)"
                let path = Self.concrete(template, app: Self.hidden, data: data)
                let body = Self.body(method, template, data: data)
                if Self.openRoutes.contains(name) { continue }
                let anonymous = try app.client.request(method, path, body: body)
                #expect(anonymous.status == 401, "\(name) answers without a credential (\(anonymous.status)); list it as open if it touches no app")
                walked += 1
                let refused = try app.client.request(method, path, token: outsider, body: body)
                let namesTheApp = template.contains("{app}") || template == "/v1/config"
                if namesTheApp {
                    // The same answer, word for word, as for an app that does not exist.
                    let missing = try app.client.request(method, Self.concrete(template, app: Self.missing, data: data), token: outsider, body: body)
                    #expect(refused.status == 404, "\(name): \(refused.status) \(refused.text)")
                    #expect(refused.text == missing.text.replacingOccurrences(of: Self.missing, with: Self.hidden), "\(name): \(refused.text) / \(missing.text)")
                    // The walk's request reaches the data: a token of the hidden app is not refused so.
                    let allowed = try app.client.request(method, path, token: insider, body: body)
                    #expect(allowed.text != refused.text, "\(name): the walk's request does not reach the app's data: \(allowed.text)")
                } else {
                    #expect((200..<300).contains(refused.status) || [401, 403, 404].contains(refused.status), "\(name): \(refused.status)")
                    // What the caller did not send itself (a report id in the path is echoed in the 404).
                    for secret in secrets where !path.contains(secret) {
                        #expect(!refused.text.contains(secret), "\(name) shows \(secret) to a token of another app: \(refused.text)")
                    }
                }
            }
        }
        #expect(walked >= 50, "the walk called \(walked) routes")
    }

    /// The routes of ingest keys: data, not changes, so not audited.
    static let ingestRoutes: Set<String> = ["POST /v1/reports", "POST /v1/sessions", "POST /v1/attest/challenge", "POST /v1/attest"]

    /// Every route that changes something is audited under a dotted `noun.verb` action
    /// (`AuditActions`), the scheme the CLI's rows use: a new route fails here until named.
    @Test func everyChangingRouteHasADottedAuditActionName() throws {
        let app = try TestApplication()
        var named = 0
        for (template, methods) in app.application.endpoints {
            for method in methods where method != "GET" && !Self.openRoutes.contains("\(method) \(template)") && !Self.ingestRoutes.contains("\(method) \(template)") {
                let parameters = template.contains("{action}") ? ["action": "pause"] : [:]
                let action = AuditActions.name(method: method, template: template, parameters: parameters)
                #expect(!action.contains(" ") && action.contains("."), "\(method) \(template) is audited as \(action)")
                named += 1
            }
        }
        #expect(named >= 20, "\(named) changing routes")
    }
}
