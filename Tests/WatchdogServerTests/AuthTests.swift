import Foundation
import PostgresClient
import GRDB
import Testing
import WatchdogTesting

@Suite struct AuthTests {

    @Test func missingOrUnknownCredentialsGet401() throws {
        let app = try TestApplication()
        _ = try app.addApp("com.example.mail")
        let body = ["reports": [try Fixtures.freshReport()]]
        let none = try app.client.postJSON("/v1/reports", token: nil, json: body)
        #expect(none.status == 401)
        #expect(none.errorCode == "unauthorized")
        #expect(none.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
        let wrong = try app.client.postJSON("/v1/reports", token: "wdi_k00000000_" + String(repeating: "0", count: 64), json: body)
        #expect(wrong.status == 401)
        #expect(try app.client.request("GET", "/v1/apps", token: "nonsense").status == 401)
        #expect(try app.storedReportCount() == 0)
    }

    @Test func anotherAppsIngestKeyGets403() throws {
        let app = try TestApplication()
        _ = try app.addApp("com.example.mail")
        let otherKey = try app.addApp("com.other.app")
        let response = try app.client.postJSON("/v1/reports", token: otherKey, json: ["reports": [try Fixtures.freshReport()]])
        #expect(response.status == 403)
        let config = try app.client.request("GET", "/v1/config?app=com.example.mail", token: otherKey)
        #expect(config.status == 403)
        #expect(try app.storedReportCount() == 0)
    }

    @Test func viewerCannotChangeConfigAndIngestKeyCannotReadStats() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let patch = try app.client.request("PATCH", "/v1/admin/apps/com.example.mail/config", token: viewer, body: Array(#"{"test_crash": true}"#.utf8))
        #expect(patch.status == 403)
        #expect(try app.client.request("GET", "/v1/admin/apps/com.example.mail/config", token: viewer).status == 200, "viewers read the config")
        #expect(try app.client.request("GET", "/v1/admin/apps/com.example.mail/config", token: key).status == 403)
        #expect(try app.client.request("GET", "/v1/apps", token: key).status == 403)
        #expect(try app.client.request("GET", "/v1/config?app=com.example.mail", token: key).json["test_crash"] as? Bool == false)
    }

    @Test func credentialsAreStoredOnlyAsHashes() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let admin = try app.addToken(role: "admin")
        let secrets = [key, String(key.suffix(64)), admin, String(admin.suffix(64))]
        if let url = try TestStore.postgresURL(directory: app.dataDirectory) {
            // PostgreSQL: no row of any table, as text, holds a secret — nor any bytea column
            // read as its bytes (a row's text shows those as hex).
            let connection = try PostgresConnection(url: url)
            let tables = try connection.query("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()").map { $0.text(0) }
            #expect(tables.contains("credentials"))
            let binary = try connection.query("""
                SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND data_type = 'bytea'
                """).map { ($0.text(0), $0.text(1)) }
            #expect(binary.contains { $0 == ("credentials", "secret_hash") })
            for table in tables {
                var text = try connection.query("SELECT t::text FROM \(table) t").map { $0.text(0) }
                for (_, column) in binary.filter({ $0.0 == table }) {
                    text += try connection.query("SELECT encode(\(column), 'escape') FROM \(table)").map { $0.text(0) }
                }
                let rows = text.joined(separator: "\n")
                for secret in secrets { #expect(!rows.contains(secret), "\(table) holds a secret") }
            }
        } else {
            // The secrets appear in no byte of the data dir (database, WAL), whatever the schema.
            let files = try FileManager.default.contentsOfDirectory(at: app.dataDirectory, includingPropertiesForKeys: nil)
            #expect(files.contains { $0.lastPathComponent.hasSuffix(".sqlite3") })
            for file in files {
                let bytes = try Data(contentsOf: file)
                for secret in secrets {
                    #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(file.lastPathComponent) holds a secret")
                }
            }
        }
        // What is stored instead is the credential's hash.
        let record = try #require(try app.store.credential(id: String(admin.split(separator: "_")[1])))
        #expect(record.role == .admin && record.secretHash.count == 32)
    }

    @Test func aRevokedTokenAndItsDashboardSessionsStopWorking() throws {
        let app = try TestApplication()
        let viewer = try app.addToken(role: "viewer", name: "contractor")
        let login = try app.client.postJSON("/v1/auth/login", token: nil, json: ["token": viewer])
        let cookie = try #require(login.headers["set-cookie"]?.split(separator: ";").first.map(String.init))
        let id = String(viewer.split(separator: "_")[1])
        // What `watchdogd tokens revoke` does (CommandLineTests runs the verb itself).
        #expect(try app.store.revokeCredentials(id: id, name: nil, atMilliseconds: app.clock.now) == 1)
        #expect(try app.store.revokeCredentials(id: id, name: nil, atMilliseconds: app.clock.now) == 0, "already revoked")
        try app.restart()
        #expect(try app.client.request("GET", "/v1/apps", token: viewer).status == 401)
        #expect(try app.client.request("GET", "/v1/apps", headers: ["Cookie": cookie]).status == 401)
    }

    @Test func adminCanCreateAppsAndRevokeKeys() throws {
        let app = try TestApplication()
        let admin = try app.addToken(role: "admin")
        let created = try app.client.postJSON("/v1/admin/apps", token: admin, json: ["app": "com.example.notes"])
        #expect(created.status == 201)
        let key = try #require(created.json["ingest_key"] as? String)
        let keyID = try #require(created.json["key_id"] as? String)
        #expect(try app.client.postJSON("/v1/admin/apps", token: admin, json: ["app": "com.example.notes"]).status == 409)
        #expect(try app.client.postJSON("/v1/admin/apps", token: admin, json: ["app": "bad app/<script>"]).status == 400)

        let report = try Fixtures.freshReport(app: "com.example.notes")
        #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": [report]]).status == 202)
        #expect(try app.client.request("DELETE", "/v1/admin/apps/com.example.notes/keys/\(keyID)", token: admin).status == 204)
        #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": [try Fixtures.freshReport(app: "com.example.notes")]]).status == 401)
        #expect(try app.client.request("DELETE", "/v1/admin/apps/com.example.notes/keys/\(keyID)", token: admin).status == 404)

        let second = try app.client.postJSON("/v1/admin/apps/com.example.notes/keys", token: admin, json: [:] as [String: String])
        #expect(second.status == 201)
    }

    @Test func aRefusedTokenIsRememberedAndAValidOneBehindTheSameAddressStillWorks() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let garbage = BadTokens.garbageToken()
        // The same refused token again and again (a fleet with a revoked key): 401 each time,
        // and it does not use up the address's budget for new attempts.
        for _ in 0..<300 {
            #expect(try app.client.request("GET", "/v1/config?app=com.example.mail", token: garbage).status == 401)
        }
        #expect(try app.client.request("GET", "/v1/config?app=com.example.mail", token: key).status == 200)
    }
}

/// Tokens of the right shape that no credential has.
enum BadTokens {
    static func garbageToken() -> String {
        "wdi_k\(UUID().uuidString.prefix(8).lowercased())_" + (0..<2).map { _ in UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased() }.joined()
    }
}
