import Foundation
import GRDB
import Testing

@Suite struct AuthTests {
    @Test func missingOrUnknownCredentialsGet401() throws {
        let daemon = try Daemon()
        _ = try daemon.addApp("com.example.mail")
        let body = ["reports": [try Fixtures.freshReport()]]
        let none = try daemon.client.postJSON("/v1/reports", token: nil, json: body)
        #expect(none.status == 401)
        #expect(none.errorCode == "unauthorized")
        #expect(none.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
        let wrong = try daemon.client.postJSON("/v1/reports", token: "wdi_k00000000_" + String(repeating: "0", count: 64), json: body)
        #expect(wrong.status == 401)
        #expect(try daemon.client.request("GET", "/v1/apps", token: "nonsense").status == 401)
        #expect(try daemon.storedReportCount() == 0)
    }

    @Test func anotherAppsIngestKeyGets403() throws {
        let daemon = try Daemon()
        _ = try daemon.addApp("com.example.mail")
        let otherKey = try daemon.addApp("com.other.app")
        let response = try daemon.client.postJSON("/v1/reports", token: otherKey, json: ["reports": [try Fixtures.freshReport()]])
        #expect(response.status == 403)
        let config = try daemon.client.request("GET", "/v1/config?app=com.example.mail", token: otherKey)
        #expect(config.status == 403)
        #expect(try daemon.storedReportCount() == 0)
    }

    @Test func viewerCannotChangeConfigAndIngestKeyCannotReadStats() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let viewer = try daemon.addToken(role: "viewer")
        let patch = try daemon.client.request("PATCH", "/v1/admin/apps/com.example.mail/config", token: viewer, body: Array(#"{"test_crash": true}"#.utf8))
        #expect(patch.status == 403)
        #expect(try daemon.client.request("GET", "/v1/admin/apps/com.example.mail/config", token: viewer).status == 200, "viewers read the config")
        #expect(try daemon.client.request("GET", "/v1/admin/apps/com.example.mail/config", token: key).status == 403)
        #expect(try daemon.client.request("GET", "/v1/apps", token: key).status == 403)
        #expect(try daemon.client.request("GET", "/v1/config?app=com.example.mail", token: key).json["test_crash"] as? Bool == false)
    }

    @Test func credentialsAreStoredOnlyAsHashes() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let admin = try daemon.addToken(role: "admin")
        let stored = try daemon.query { db in
            try Row.fetchAll(db, sql: "SELECT id, role, app, name, lower(hex(secret_hash)) AS hash FROM credentials").map { "\($0)" }
        }
        #expect(stored.count == 2)
        for row in stored {
            #expect(!row.contains(key) && !row.contains(String(key.suffix(64))))
            #expect(!row.contains(String(admin.suffix(64))))
        }
    }

    @Test func aRevokedTokenAndItsDashboardSessionsStopWorking() throws {
        let daemon = try Daemon()
        let viewer = try daemon.addToken(role: "viewer", name: "contractor")
        let login = try daemon.client.postJSON("/v1/auth/login", token: nil, json: ["token": viewer])
        let cookie = try #require(login.headers["set-cookie"]?.split(separator: ";").first.map(String.init))
        let id = String(viewer.split(separator: "_")[1])
        #expect(try daemon.runCommand(["tokens", "revoke", id]).status == 0)
        #expect(try daemon.runCommand(["tokens", "revoke", id]).status != 0, "already revoked")
        try daemon.restart()
        #expect(try daemon.client.request("GET", "/v1/apps", token: viewer).status == 401)
        #expect(try daemon.client.request("GET", "/v1/apps", headers: ["Cookie": cookie]).status == 401)
    }

    @Test func adminCanCreateAppsAndRevokeKeys() throws {
        let daemon = try Daemon()
        let admin = try daemon.addToken(role: "admin")
        let created = try daemon.client.postJSON("/v1/admin/apps", token: admin, json: ["app": "com.example.notes"])
        #expect(created.status == 201)
        let key = try #require(created.json["ingest_key"] as? String)
        let keyID = try #require(created.json["key_id"] as? String)
        #expect(try daemon.client.postJSON("/v1/admin/apps", token: admin, json: ["app": "com.example.notes"]).status == 409)
        #expect(try daemon.client.postJSON("/v1/admin/apps", token: admin, json: ["app": "bad app/<script>"]).status == 400)

        let report = try Fixtures.freshReport(app: "com.example.notes")
        #expect(try daemon.client.postJSON("/v1/reports", token: key, json: ["reports": [report]]).status == 202)
        #expect(try daemon.client.request("DELETE", "/v1/admin/apps/com.example.notes/keys/\(keyID)", token: admin).status == 204)
        #expect(try daemon.client.postJSON("/v1/reports", token: key, json: ["reports": [try Fixtures.freshReport(app: "com.example.notes")]]).status == 401)
        #expect(try daemon.client.request("DELETE", "/v1/admin/apps/com.example.notes/keys/\(keyID)", token: admin).status == 404)

        let second = try daemon.client.postJSON("/v1/admin/apps/com.example.notes/keys", token: admin, json: [:] as [String: String])
        #expect(second.status == 201)
    }
}
