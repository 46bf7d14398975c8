import Foundation
import GRDB
import PostgresClient
import Testing
import WatchdogTesting

/// Roles per app (issue 41): viewer, operator and admin, for every app or for a list of apps.
@Suite struct RolesPerAppTests {
    static let mail = "com.example.mail"
    static let chat = "com.example.chat"

    @Test func anOperatorChangesConfigReleasesAlertsAndRolloutsButNotAdmissionAttestationOrKeys() throws {
        let app = try TestApplication()
        _ = try app.addApp(Self.mail)
        let operatorToken = try app.addToken(role: "operator", name: "ops", apps: [Self.mail])
        let base = "/v1/admin/apps/\(Self.mail)"
        let config = Array(#"{"rules": [{"id": "fix", "match": {"percent": 0}, "set": {"auto_fix": true}}]}"#.utf8)
        #expect(try app.client.request("PUT", "\(base)/config", token: operatorToken, body: config).status == 200)
        #expect(try app.client.postJSON("\(base)/releases", token: operatorToken, json: ["version": "1.0", "build": "1"]).status == 201)
        let hook = try app.client.postJSON("\(base)/alerts/hooks", token: operatorToken, json: ["url": "https://hooks.example.com/ops"])
        #expect(hook.status == 201, "\(hook.text)")
        #expect(try app.client.postJSON("\(base)/rollouts", token: operatorToken, json: ["rule": "fix"]).status == 201)

        for (method, path, body) in [("PUT", "\(base)/admission", #"{"mode": "open"}"#), ("PUT", "\(base)/attestation", #"{"mode": "off"}"#),
                                     ("POST", "\(base)/keys", "{}"), ("POST", "/v1/admin/apps", #"{"app": "com.example.new"}"#)] {
            let refused = try app.client.request(method, path, token: operatorToken, body: Array(body.utf8))
            #expect(refused.status == 403 && refused.errorCode == "forbidden", "\(method) \(path): \(refused.status)")
        }
        let viewer = try app.addToken(role: "viewer", name: "qa", apps: [Self.mail])
        #expect(try app.client.request("PATCH", "\(base)/config", token: viewer, body: Array(#"{"test_crash": true}"#.utf8)).status == 403)
        #expect(try app.client.request("GET", "\(base)/config", token: viewer).status == 200)
    }

    @Test func anAppScopedAdminCannotCreateAppsButChangesItsAppsSettings() throws {
        let app = try TestApplication()
        _ = try app.addApp(Self.mail)
        let admin = try app.addToken(role: "admin", name: "mail-lead", apps: [Self.mail])
        #expect(try app.client.request("PUT", "/v1/admin/apps/\(Self.mail)/admission", token: admin, body: Array(#"{"mode": "open"}"#.utf8)).status == 200)
        let created = try app.client.postJSON("/v1/admin/apps", token: admin, json: ["app": "com.example.new"])
        #expect(created.status == 403 && created.errorMessage?.contains(Self.mail) == true, "\(created.text)")
        #expect(try app.store.appExists("com.example.new") == false)
    }

    @Test func aScopedTokensAppListAndDashboardSessionShowOnlyItsApps() throws {
        let app = try TestApplication()
        _ = try app.addApp(Self.mail)
        _ = try app.addApp(Self.chat)
        let viewer = try app.addToken(role: "viewer", name: "chat-qa", apps: [Self.chat])
        let names = { (response: TestResponse) in (response.json["apps"] as? [[String: Any]] ?? []).compactMap { $0["app"] as? String } }
        #expect(names(try app.client.request("GET", "/v1/apps", token: viewer)) == [Self.chat])
        #expect(names(try app.client.request("GET", "/v1/apps", token: try app.addToken(role: "viewer"))).sorted() == [Self.chat, Self.mail])

        let login = try app.client.postJSON("/v1/auth/login", token: nil, json: ["token": viewer])
        let cookie = try #require(DashboardAuthTests.cookie(from: login))
        #expect(names(try app.client.request("GET", "/v1/apps", headers: ["Cookie": cookie])) == [Self.chat])
        let session = try app.client.request("GET", "/v1/auth/session", headers: ["Cookie": cookie])
        #expect(session.json["apps"] as? [String] == [Self.chat] && session.json["role"] as? String == "viewer", "\(session.text)")
        let other = try app.client.request("GET", "/v1/apps/\(Self.mail)/releases", headers: ["Cookie": cookie])
        #expect(other.status == 404 && other.errorMessage == "no app \(Self.mail)")
        #expect(try app.client.request("GET", "/v1/apps/\(Self.chat)/releases", headers: ["Cookie": cookie]).status == 200)
        #expect(try app.client.request("GET", "/v1/config?app=\(Self.mail)", token: viewer).status == 404)
        #expect(try app.client.request("GET", "/v1/config?app=\(Self.chat)", token: viewer).status == 200)
    }

    @Test func aReportOfAnotherAppIsNotFoundByIDAndAnAmbiguousIDNamesOnlyVisibleApps() throws {
        let app = try TestApplication()
        let mailKey = try app.addApp(Self.mail)
        let chatKey = try app.addApp(Self.chat)
        let id = UUID().uuidString.lowercased()
        for (key, name) in [(mailKey, Self.mail), (chatKey, Self.chat)] {
            var report = try Fixtures.freshReport(app: name)
            report["id"] = id
            #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": [report]]).status == 202)
        }
        let everyApp = try app.addToken(role: "viewer")
        let ambiguous = try app.client.request("GET", "/v1/reports/\(id)", token: everyApp)
        #expect(ambiguous.status == 409 && ambiguous.text.contains(Self.mail))
        let chatOnly = try app.addToken(role: "viewer", name: "chat", apps: [Self.chat])
        let found = try app.client.request("GET", "/v1/reports/\(id)", token: chatOnly)
        #expect(found.status == 200 && (found.json["report"] as? [String: Any])?["app"] as? String == Self.chat && !found.text.contains(Self.mail), "\(found.text)")
        let asked = try app.client.request("GET", "/v1/reports/\(id)?app=\(Self.mail)", token: chatOnly)
        #expect(asked.status == 404)
    }

    /// A data dir from before roles per app: its admin and viewer tokens work on every app after
    /// the migration, and an operator can be added.
    @Test func tokensMadeBeforeRolesPerAppKeepWorkingOnEveryApp() throws {
        let app = try TestApplication()
        _ = try app.addApp(Self.mail)
        let admin = try app.addToken(role: "admin", name: "old-admin")
        let viewer = try app.addToken(role: "viewer", name: "old-viewer")
        try app.stop()
        try Self.undoAppRoles(app)
        try app.restart()
        _ = try app.addApp(Self.chat)
        let listed = try app.client.request("GET", "/v1/apps", token: viewer).json["apps"] as? [[String: Any]] ?? []
        #expect(listed.count == 2)
        #expect(try app.client.request("PATCH", "/v1/admin/apps/\(Self.chat)/config", token: admin, body: Array(#"{"test_crash": true}"#.utf8)).status == 200)
        #expect(try app.client.postJSON("/v1/admin/apps", token: admin, json: ["app": "com.example.third"]).status == 201)
        let operatorToken = try app.addToken(role: "operator", apps: [Self.chat])
        #expect(try app.client.request("PATCH", "/v1/admin/apps/\(Self.chat)/config", token: operatorToken, body: Array(#"{"test_crash": false}"#.utf8)).status == 200)
    }

    /// Takes the store back to the schema before `2026-11-27-app-roles`, keeping its rows.
    static func undoAppRoles(_ app: TestApplication) throws {
        if let url = try TestStore.postgresURL(directory: app.dataDirectory) {
            let connection = try PostgresConnection(url: url)
            try connection.execute("""
                ALTER TABLE credentials DROP COLUMN apps;
                ALTER TABLE credentials DROP CONSTRAINT credentials_role_check;
                ALTER TABLE credentials ADD CONSTRAINT credentials_role_check CHECK (role IN ('ingest', 'viewer', 'admin'));
                DELETE FROM watchdog_migrations WHERE identifier = '2026-11-27-app-roles';
                """)
            return
        }
        let queue = try DatabaseQueue(path: try app.sqlite.path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            try db.inTransaction {
                try db.execute(sql: """
                    CREATE TABLE credentials_old (
                        id TEXT PRIMARY KEY,
                        role TEXT NOT NULL CHECK (role IN ('ingest', 'viewer', 'admin')),
                        app TEXT REFERENCES apps(id),
                        name TEXT NOT NULL,
                        secret_hash BLOB NOT NULL UNIQUE,
                        created_at INTEGER NOT NULL,
                        revoked_at INTEGER
                    );
                    INSERT INTO credentials_old SELECT id, role, app, name, secret_hash, created_at, revoked_at FROM credentials;
                    DROP TABLE credentials;
                    ALTER TABLE credentials_old RENAME TO credentials;
                    DELETE FROM grdb_migrations WHERE identifier = '2026-11-27-app-roles';
                    """)
                return .commit
            }
        }
        try queue.close()
    }
}
