import Foundation
import Testing
import WatchdogTesting

/// Answers that strayed from `openapi.yaml` or from what the CLI promised (issue 13, point 10).
@Suite struct ContractSlipTests {

    @Test func anIngestKeyHasNoDashboardSession() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let answer = try app.client.request("GET", "/v1/auth/session", token: key)
        #expect(answer.status == 403, "\(answer.status) \(answer.text)")
        #expect(answer.errorCode == "forbidden")
        #expect(try app.client.request("GET", "/v1/auth/session", token: viewer).json["role"] as? String == "viewer")
    }

    @Test func rollbackRefusesFieldsTheSchemaForbids() throws {
        let app = try TestApplication()
        _ = try app.addApp("com.example.mail")
        let admin = try app.addToken(role: "admin")
        // Versions 1 and 2 exist, so a rollback to 1 would succeed but for the extra field.
        for change in [#"{"auto_fix": true}"#, #"{"auto_fix": false}"#] {
            let answer = try ConfigRulesTests.patch(app, admin, change)
            #expect(answer.status == 200)
        }
        let path = "/v1/admin/apps/com.example.mail/config/rollback"
        for body in [["version": 1, "force": true], ["version": 1, "defaults": ["test_crash": true]]] as [[String: Any]] {
            let answer = try app.client.postJSON(path, token: admin, json: body)
            #expect(answer.status == 400, "\(body.keys.sorted()) → \(answer.status) \(answer.text)")
            #expect(answer.errorCode == "invalid_shape")
        }
        let history = try app.client.request("GET", "/v1/admin/apps/com.example.mail/config/history", token: admin)
        #expect((history.json["history"] as? [Any])?.count == 2, "a refused rollback made no version")
        #expect(try app.client.postJSON(path, token: admin, json: ["version": 1]).status == 200)
    }
}
