import Foundation
import GRDB
import Testing
import WatchdogTesting

/// Report ids are unique per app, not across apps (issue 13, point 6): another app's id is
/// not a duplicate, so posting tells nothing about other apps' reports and cannot pre-empt
/// them.
@Suite struct ReportIDsPerAppTests {
    static func report(app: String, id: String) throws -> [String: Any] {
        var report = try Fixtures.freshReport(app: app)
        report["id"] = id
        return report
    }

    static func post(_ app: TestApplication, key: String, _ report: [String: Any]) throws -> (accepted: Int?, duplicates: Int?) {
        let answer = try app.client.postJSON("/v1/reports", token: key, json: ["reports": [report]])
        return (answer.json["accepted"] as? Int, answer.json["duplicates"] as? Int)
    }

    @Test func anotherAppsIdIsNeitherADuplicateNorPreempted() throws {
        let app = try TestApplication()
        let mail = try app.addApp("com.example.mail")
        let notes = try app.addApp("com.example.notes")
        let viewer = try app.addToken(role: "viewer")
        let shared = UUID().uuidString.lowercased()
        let first = UUID().uuidString.lowercased()

        #expect(try Self.post(app, key: mail, try Self.report(app: "com.example.mail", id: shared)) == (1, 0))
        // The oracle: notes learns nothing about mail's ids.
        #expect(try Self.post(app, key: notes, try Self.report(app: "com.example.notes", id: shared)) == (1, 0))
        // Pre-emption: notes posts an id first; mail's report with that id is still stored.
        #expect(try Self.post(app, key: notes, try Self.report(app: "com.example.notes", id: first)) == (1, 0))
        #expect(try Self.post(app, key: mail, try Self.report(app: "com.example.mail", id: first.uppercased())) == (1, 0))
        // Within one app a repost is still a duplicate (ids compared case-insensitively).
        #expect(try Self.post(app, key: mail, try Self.report(app: "com.example.mail", id: shared.uppercased())) == (0, 1))
        #expect(try app.storedReportCount() == 4)

        // One report by id: the app picks it; without the app an id two apps use is ambiguous.
        let ofNotes = try app.client.request("GET", "/v1/reports/\(shared)?app=com.example.notes", token: viewer)
        #expect(ofNotes.status == 200)
        #expect((ofNotes.json["report"] as? [String: Any])?["app"] as? String == "com.example.notes")
        let ambiguous = try app.client.request("GET", "/v1/reports/\(shared)", token: viewer)
        #expect(ambiguous.status == 409)
        #expect(ambiguous.errorCode == "ambiguous_report_id")
        #expect(try app.client.request("GET", "/v1/reports/\(shared)?app=com.example.other", token: viewer).status == 404)
        let unique = UUID().uuidString.lowercased()
        #expect(try Self.post(app, key: mail, try Self.report(app: "com.example.mail", id: unique)) == (1, 0))
        #expect(try app.client.request("GET", "/v1/reports/\(unique)", token: viewer).status == 200)
    }

    /// A data dir from before the migration (ids a global primary key) keeps every report, its
    /// order and its answers, and then takes another app's id.
    @Test(.enabled(if: TestStore.isSQLite, "migrates a SQLite data dir")) func anExistingDataDirIsMigratedKeepingEveryReportAndItsOrder() throws {
        let app = try TestApplication()
        let mail = try app.addApp("com.example.mail")
        let notes = try app.addApp("com.example.notes")
        let viewer = try app.addToken(role: "viewer")
        var ids: [String] = []
        for index in 0..<30 {
            let name = index % 3 == 0 ? "com.example.notes" : "com.example.mail"
            let report = try Fixtures.freshReport(app: name)
            ids.append(report["id"] as? String ?? "")
            let key = name == "com.example.mail" ? mail : notes
            // Started, as an SDK does: the figures compared do not rest on unknown sessions.
            #expect(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": Fixtures.sessionStarts(for: [report])]).status == 202)
            #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": [report]]).status == 202)
        }
        let paths = ["/v1/apps/com.example.mail/reports?limit=7", "/v1/apps/com.example.notes/reports", "/v1/apps/com.example.mail/releases",
                     "/v1/reports/\(ids[4])"]
        func answers() throws -> [String] { try paths.map { try app.client.request("GET", $0, token: viewer).text } }
        let before = try answers()
        try app.stop()
        // Back to the old schema: reports keyed by id alone, rowids kept, the migration unrecorded.
        let queue = try DatabaseQueue(path: try app.sqlite.path)
        try queue.write { db in
            try OldSchema.undoCompactStorage(db)
            let columns = "id, app, version, build, channel, kind, occurred_at, received_at, session_id, install_id, suspect, screen, fingerprint, body, flooded"
            try db.execute(sql: """
                CREATE TABLE old_reports (
                    id TEXT PRIMARY KEY, app TEXT NOT NULL, version TEXT NOT NULL, build TEXT NOT NULL, channel TEXT, kind TEXT NOT NULL,
                    occurred_at INTEGER NOT NULL, received_at INTEGER NOT NULL, session_id TEXT, install_id TEXT, suspect INTEGER NOT NULL,
                    screen TEXT, fingerprint TEXT NOT NULL, body TEXT NOT NULL, flooded INTEGER NOT NULL DEFAULT 0);
                INSERT INTO old_reports (rowid, \(columns)) SELECT rowid, \(columns) FROM reports;
                DROP TABLE reports;
                ALTER TABLE old_reports RENAME TO reports;
                CREATE INDEX reports_by_release ON reports (app, version, build);
                CREATE INDEX reports_by_release_kind ON reports (app, version, build, kind);
                CREATE INDEX reports_by_fingerprint ON reports (app, fingerprint);
                DELETE FROM grdb_migrations WHERE identifier = '2026-11-23-report-ids-per-app';
                """)
        }
        try queue.close()
        try app.restart()
        #expect(try answers() == before)
        #expect(try app.storedReportCount() == 30)
        #expect(try Self.post(app, key: notes, try Self.report(app: "com.example.notes", id: ids[1])) == (1, 0))
        #expect(try Self.post(app, key: mail, try Self.report(app: "com.example.mail", id: ids[1])) == (0, 1))
        let indexes = try DatabaseQueue(path: try app.sqlite.path).read { try String.fetchAll($0, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'reports' AND name NOT LIKE 'sqlite_%' ORDER BY name") }
        #expect(indexes == ["reports_by_fingerprint", "reports_by_release_kind"])
    }
}
