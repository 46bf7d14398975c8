import Foundation
import GRDB
import Testing
@testable import WatchdogStore
import WatchdogTesting

/// `watchdogd store copy`: an SQLite data dir copied into PostgreSQL answers every API question
/// the same, also after an interrupted copy was continued, and a database holding other data is
/// refused. Runs where the tests have a PostgreSQL (`WATCHDOG_TEST_STORE=postgres`).
@Suite(.enabled(if: !TestStore.isSQLite, "copies into PostgreSQL (WATCHDOG_TEST_STORE=postgres)"))
struct StoreCopyTests {
    static let app = "com.example.mail"
    static let other = "com.example.notes"

    struct Source {
        var app: TestApplication
        var key: String
        var otherKey: String
        var viewer: String
        var admin: String
        var reportIDs: [String]
    }

    static var postgresBase: String {
        if case .postgres(let url) = TestStore.current { return url }
        return "postgres://postgres@127.0.0.1:55432/watchdog"
    }

    /// A realistic SQLite data dir: two apps, three releases, shared sessions (some flooded),
    /// suspect reports, sessions, client drops, config changes, a revoked key, an alert rule.
    static func source() throws -> Source {
        let app = try TestApplication(storeKind: .sqlite)
        let key = try app.addApp(Self.app)
        let otherKey = try app.addApp(Self.other)
        let viewer = try app.addToken(role: "viewer")
        let admin = try app.addToken(role: "admin")
        let revoked = try app.addToken(role: "viewer", name: "gone")
        #expect(try app.store.revokeCredentials(id: String(revoked.split(separator: "_")[1]), name: nil, atMilliseconds: app.clock.now) == 1)
        var ids: [String] = []
        let releases = [("14.2.0", "31245"), ("14.3.0", "31300"), ("14.3.0", "31301")]
        // The sessions the reports name, started first (only started sessions are affected or flooded).
        let sessionIDs = (0..<6).map { String(format: "00000000-0000-4000-8000-%012d", $0) }
        let starts = sessionIDs.map { Fixtures.session(app: Self.app, id: $0) }
        #expect(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": starts]).json["accepted"] as? Int == 6)
        for round in 0..<6 {
            var batch: [[String: Any]] = []
            for index in 0..<23 {
                let (version, build) = releases[(round + index) % releases.count]
                var report = try Fixtures.freshReport(app: Self.app, version: version, build: build,
                                                      kind: ["view_frame_mismatch", "input_covered_by_keyboard"][index % 2],
                                                      sessionID: sessionIDs[index % 5], appState: index % 7 == 0 ? "background" : "active")
                report["screen"] = "Screen\(index % 4)"
                ids.append(report["id"] as! String)
                batch.append(report)
            }
            let drop: [String: Any] = ["id": UUID().uuidString.lowercased(), "release": ["version": "14.2.0", "build": "31245"], "evicted": round, "quarantined": 1]
            let posted = try app.client.postJSON("/v1/reports", token: key, json: ["reports": batch, "client_dropped": drop])
            #expect(posted.status == 202 && posted.json["accepted"] as? Int == 23, "\(posted.text.prefix(500))")
            app.clock.advance(milliseconds: 3_600_000 * 7)
        }
        // One session past the flood cap (10 reports of one fingerprint).
        let flood = try (0..<14).map { _ in
            var report = try Fixtures.freshReport(app: Self.app, sessionID: sessionIDs[5])
            report["screen"] = "Screen0"
            return report
        }
        #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": flood]).json["accepted"] as? Int == 14)
        ids += flood.map { $0["id"] as! String }
        for release in releases {
            let sessions = (0..<9).map { _ in Fixtures.session(app: Self.app, version: release.0, build: release.1) }
            #expect(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": sessions]).status == 202)
        }
        let otherReports = try (0..<4).map { _ in try Fixtures.freshReport(app: Self.other, version: "1.0", build: "1") }
        #expect(try app.client.postJSON("/v1/reports", token: otherKey, json: ["reports": otherReports]).status == 202)
        ids += otherReports.map { $0["id"] as! String }
        for (index, change) in [#"{"auto_fix": true}"#, #"{"lock_threshold_s": 12}"#, #"{"auto_fix": false}"#].enumerated() {
            let patch = try app.client.request("PATCH", "/v1/admin/apps/\(Self.app)/config", token: admin, body: Array(change.utf8))
            #expect(patch.status == 200, "change \(index): \(patch.text)")
        }
        let hook = try app.client.postJSON("/v1/admin/apps/\(Self.app)/alerts/hooks", token: admin, json: ["name": "ops", "url": "http://127.0.0.1:9/hook"])
        #expect(hook.status == 201, "\(hook.text)")
        let rule = try app.client.postJSON("/v1/admin/apps/\(Self.app)/alerts/rules", token: admin,
                                           json: ["condition": "test_crashes", "hook": hook.json["id"] as? String ?? ""])
        #expect(rule.status == 201, "\(rule.text)")
        // A triaged issue: resolved with a note, and a mute on top (the issues list shows both).
        let issues = try app.client.request("GET", "/v1/apps/\(Self.app)/issues?release=14.2.0", token: admin)
        let fingerprint = try #require((issues.json["issues"] as? [[String: Any]])?.first?["fingerprint"] as? String)
        #expect(try app.client.postJSON("/v1/apps/\(Self.app)/issues/\(fingerprint)/resolve", token: admin, json: ["note": "fixed"]).status == 200)
        #expect(try app.client.postJSON("/v1/apps/\(Self.app)/issues/\(fingerprint)/mute", token: admin, json: ["sessions": 50]).status == 200)
        // Rows as older data dirs have them: bodies as TEXT, an id that is not a canonical
        // lowercase UUID as TEXT.
        try app.stop()
        let queue = try DatabaseQueue(path: try app.sqlite.path)
        try queue.write { db in
            for table in ["reports", "sessions"] {
                for rowid in [2, 7, 19] as [Int64] {
                    let body = try DatabaseValue.fetchOne(db, sql: "SELECT body FROM \(table) WHERE rowid = ?", arguments: [rowid]) ?? .null
                    try db.execute(sql: "UPDATE \(table) SET body = ? WHERE rowid = ?", arguments: [try StoredBody.text(from: body), rowid])
                }
            }
            try db.execute(sql: "UPDATE reports SET id = 'legacy-id-11' WHERE rowid = 11")
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM reports WHERE typeof(body) = 'text'") == 3)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM reports WHERE flooded = 1") ?? 0 > 0, "some reports are past the flood cap")
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM reports WHERE suspect = 1") ?? 0 > 0, "some reports are suspect")
        }
        try queue.close()
        ids[10] = "legacy-id-11"
        try app.restart()
        return Source(app: app, key: key, otherKey: otherKey, viewer: viewer, admin: admin, reportIDs: ids)
    }

    /// What the API answers, as bytes: every listing, the reports paged by cursor, exports,
    /// config and its history, single reports.
    static func answers(_ app: TestApplication, _ source: Source) throws -> [String: String] {
        var answers: [String: String] = [:]
        func get(_ path: String, _ token: String) throws -> TestResponse {
            let response = try app.client.request("GET", path, token: token)
            answers[path] = "\(response.status) \(response.text)"
            return response
        }
        for name in [Self.app, Self.other] {
            let base = "/v1/apps/\(name)"
            for path in ["/releases", "/issues", "/issues?release=14.2.0", "/issues?release=14.3.0%20(31301)", "/timeseries", "/keyboard",
                         "/cohorts", "/compare", "/overlay", "/rules", "/reports.ndjson", "/reports.ndjson?release=14.3.0%20(31300)",
                         "/reports?kind=input_covered_by_keyboard&limit=500", "/compare?base=14.2.0&target=14.3.0%20(31300)"] {
                _ = try get(base + path, source.viewer)
            }
            var cursor: String?
            repeat {
                let page = try get("\(base)/reports?limit=7" + (cursor.map { "&cursor=\($0)" } ?? ""), source.viewer)
                cursor = page.json["next_cursor"] as? String
            } while cursor != nil
            for path in ["/config", "/config/history", "/config/history/2", "/keys", "/alerts/rules", "/alerts/hooks"] {
                _ = try get("/v1/admin/apps/\(name)\(path)", source.admin)
            }
        }
        _ = try get("/v1/apps", source.viewer)
        _ = try get("/v1/admin/apps", source.admin)
        _ = try get("/v1/config?app=\(Self.app)&install_id=I-1", source.key)
        for id in source.reportIDs.enumerated().filter({ $0.offset % 11 == 0 }).map(\.element) {
            _ = try get("/v1/reports/\(id)", source.viewer)
        }
        return answers
    }

    static func expectSame(_ expected: [String: String], _ actual: [String: String], _ comment: String) {
        #expect(expected.keys.sorted() == actual.keys.sorted())
        var differing = 0
        for (path, answer) in expected.sorted(by: { $0.key < $1.key }) where actual[path] != answer {
            differing += 1
            if differing <= 5 { Issue.record("\(comment): \(path) differs\n sqlite:   \(answer.prefix(600))\n postgres: \((actual[path] ?? "none").prefix(600))") }
        }
        #expect(differing == 0, "\(comment): \(differing) of \(expected.count) answers differ")
    }

    /// An empty PostgreSQL application (its own schema) on the source's clock, stopped, and
    /// the URL of its schema.
    static func destination(_ source: Source) throws -> (TestApplication, String) {
        let app = try TestApplication(clock: source.app.clock, storeKind: .postgres(url: postgresBase))
        try app.stop()
        return (app, try app.storeKind.postgresURL(directory: app.dataDirectory)!)
    }

    static func copy(_ source: Source, into url: String, chunkSize: Int = 5_000, stopAfterChunks: Int? = nil) throws -> SQLiteToPostgres.Summary {
        let sqlite = try SQLiteStore(directory: source.app.dataDirectory.path)
        defer { try? sqlite.close() }
        let postgres = try PostgresStore(url: url, connections: 2)
        defer { try? postgres.close() }
        let copy = SQLiteToPostgres(source: sqlite, destination: postgres, chunkSize: chunkSize)
        copy.stopAfterChunks = stopAfterChunks
        return try copy.run()
    }

    static func expectCounts(_ summary: SQLiteToPostgres.Summary) {
        #expect(summary.mismatches.isEmpty, "\(summary.mismatches.map { "\($0.name): \($0.source) vs \($0.destination)" })")
        let reports = summary.counts.first { $0.name == "reports" }
        #expect(reports?.source == 156 && reports?.destination == 156, "\(String(describing: reports))")
        for table in ["sessions", "report_keys", "credentials", "config_changes", "client_drops", "session_issue_marks", "session_value_marks", "release_installs"] {
            #expect((summary.counts.first { $0.name == table }?.source ?? 0) > 0, "\(table) has rows to copy")
        }
    }

    @Test func aCopiedDataDirAnswersEveryQuestionAsTheSQLiteOneDid() throws {
        let source = try Self.source()
        let (postgres, url) = try Self.destination(source)
        defer { try? source.app.stop(); try? postgres.stop() }
        let before = try Self.answers(source.app, source)
        try source.app.stop()

        let summary = try Self.copy(source, into: url, chunkSize: 40)
        Self.expectCounts(summary)
        #expect(!summary.resumed)
        try postgres.restart()
        Self.expectSame(before, try Self.answers(postgres, source), "after the copy")

        // Both stores go on the same way: ids already stored are duplicates, new reports of
        // known sessions count (affected sessions, the flood cap, per screen, kind and keyboard
        // mode: the last three start another issue on values their sessions were counted for)
        // from the copied marks.
        try source.app.restart()
        var batch = try (0..<15).map { index in
            var report = try Fixtures.freshReport(app: Self.app, version: "14.3.0", build: "31300", sessionID: String(format: "00000000-0000-4000-8000-%012d", index % 3))
            report["screen"] = "Screen\(index % 4)"
            if index >= 12, var view = report["view"] as? [String: Any] {
                view["name"] = "afterTheCopy"
                report["view"] = view
            }
            return report
        }
        batch[0]["id"] = source.reportIDs[1]
        batch[1]["id"] = source.reportIDs[130].uppercased()
        // The same bytes to both (a dictionary serialized twice may order its keys differently).
        let bytes = Array(try JSONSerialization.data(withJSONObject: ["reports": batch]))
        for app in [source.app, postgres] {
            let posted = try app.client.request("POST", "/v1/reports", token: source.key, headers: ["Content-Type": "application/json"], body: bytes)
            #expect(posted.json["accepted"] as? Int == 13 && posted.json["duplicates"] as? Int == 2, "\(posted.text)")
        }
        var extended = source
        extended.reportIDs += batch.map { $0["id"] as! String }
        Self.expectSame(try Self.answers(source.app, extended), try Self.answers(postgres, extended), "after new reports on both")
    }

    @Test func anInterruptedCopyContinuesWhereItStoppedAndStoresNothingTwice() throws {
        let source = try Self.source()
        let (postgres, url) = try Self.destination(source)
        defer { try? source.app.stop(); try? postgres.stop() }
        let before = try Self.answers(source.app, source)
        try source.app.stop()

        #expect(throws: SQLiteToPostgres.Interrupted.self) { try Self.copy(source, into: url, chunkSize: 25, stopAfterChunks: 2) }
        #expect(throws: SQLiteToPostgres.Interrupted.self) { try Self.copy(source, into: url, chunkSize: 25, stopAfterChunks: 4) }
        // A different chunk size on the last run: progress is by rowid, not by chunk number.
        let summary = try Self.copy(source, into: url, chunkSize: 30)
        #expect(summary.resumed)
        #expect(summary.rowsCopied < summary.counts.reduce(0) { $0 + ($1.name.hasPrefix("reports of") || $1.name.hasPrefix("roll-up") ? 0 : $1.source) })
        Self.expectCounts(summary)
        try postgres.restart()
        Self.expectSame(before, try Self.answers(postgres, source), "after an interrupted copy was continued")

        // Once finished, the copy is not run again over a store that may be in use.
        try postgres.stop()
        #expect(throws: SQLiteToPostgres.Failure.self) { try Self.copy(source, into: url) }
    }

    @Test func aDatabaseHoldingOtherDataIsRefused() throws {
        let source = try Self.source()
        try source.app.stop()
        defer { try? source.app.stop() }
        // Reports of a store that was never this copy.
        let elsewhere = try TestApplication(storeKind: .postgres(url: Self.postgresBase))
        let key = try elsewhere.addApp("com.example.elsewhere")
        #expect(try elsewhere.client.postJSON("/v1/reports", token: key, json: ["reports": [try Fixtures.freshReport(app: "com.example.elsewhere")]]).status == 202)
        try elsewhere.stop()
        let url = try elsewhere.storeKind.postgresURL(directory: elsewhere.dataDirectory)!
        let error = #expect(throws: SQLiteToPostgres.Failure.self) { try Self.copy(source, into: url) }
        #expect(error?.description.contains("already holds data") == true, "\(String(describing: error))")

        // An unfinished copy into which a serve then wrote: refused too.
        let (postgres, target) = try Self.destination(source)
        #expect(throws: SQLiteToPostgres.Interrupted.self) { try Self.copy(source, into: target, chunkSize: 20, stopAfterChunks: 1) }
        let store = try PostgresStore(url: target, connections: 1)
        _ = try store.createApp("com.example.elsewhere", createdAtMilliseconds: 1)
        try store.close()
        let mixed = #expect(throws: SQLiteToPostgres.Failure.self) { try Self.copy(source, into: target) }
        #expect(mixed?.description.contains("not in the source") == true, "\(String(describing: mixed))")
        _ = postgres
    }
}
