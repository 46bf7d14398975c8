import Foundation
import GRDB
import Testing
@testable import WatchdogStore
import WatchdogTesting

/// The per-value session marks keyed by a number of `mark_values` instead of the value's text
/// (`2026-11-26-mark-values`): an existing data dir keeps every mark, and a number handed out
/// in a transaction that rolled back is never used for another value.
extension CompactStorageTests {
    /// A report of `session` on `screen` whose view is `view` (the view only makes another issue).
    static func report(_ session: String, screen: String, view: String = "list", version: String = "14.2.0") throws -> [String: Any] {
        var report = try Fixtures.freshReport(version: version, sessionID: session)
        report["screen"] = screen
        var shown = report["view"] as? [String: Any] ?? [:]
        shown["name"] = view
        report["view"] = shown
        return report
    }

    /// Affected sessions per dimension and value of a release, as the compare view reads them.
    static func affected(_ app: TestApplication, version: String = "14.2.0") throws -> [String: [String: Int]] {
        try app.sqlite.releaseDetail(app: "com.example.mail", release: ReleaseID(version: version, build: "31245"))?.affectedSessions ?? [:]
    }

    /// Every value mark as release, dimension, the value's text and the session's hex.
    static func valueMarks(_ db: Database, numbered: Bool) throws -> Set<String> {
        let value = numbered ? "(SELECT value FROM mark_values WHERE number = m.value)" : "m.value"
        return Set(try String.fetchAll(db, sql: "SELECT m.release || ' ' || m.dimension || ' ' || \(value) || ' ' || hex(m.session) FROM session_value_marks m"))
    }

    @Test func aSessionCountedForAValueBeforeTheValuesWereNumberedIsNotCountedAgain() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let sessions = (0..<2).map { Self.sessionID($0) }
        #expect(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": sessions.map { Fixtures.session(id: $0) }]).status == 202)
        func post(_ reports: [[String: Any]]) throws {
            #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": reports]).json["accepted"] as? Int == reports.count)
        }
        try post([Self.report(sessions[0], screen: "Inbox"), Self.report(sessions[1], screen: "Inbox"), Self.report(sessions[1], screen: "Compose")])
        let before = try Self.affected(app)
        #expect(before["screen"] == ["Inbox": 2, "Compose": 1] && before["kind"] == ["view_frame_mismatch": 2])
        try app.stop()

        // The marks as the schema before wrote them: the value's text in each row.
        let queue = try DatabaseQueue(path: try app.sqlite.path)
        try queue.write { try OldSchema.undoMarkValues($0) }
        let oldMarks = try queue.read { try Self.valueMarks($0, numbered: false) }
        #expect(oldMarks.count == 7, "three screens, two kinds, two keyboard modes: \(oldMarks.sorted())")
        try queue.close()

        try app.restart()
        let types = try DatabaseQueue(path: try app.sqlite.path).read { db in
            (try String.fetchAll(db, sql: "SELECT DISTINCT typeof(value) FROM session_value_marks"), try Self.valueMarks(db, numbered: true))
        }
        #expect(types.0 == ["integer"])
        #expect(types.1 == oldMarks, "every mark kept, each value's number standing for its text")
        // Session 0 in another issue (another view) on the screen and kind it was counted for,
        // and on a screen it was not.
        try post([Self.report(sessions[0], screen: "Inbox", view: "footer"), Self.report(sessions[0], screen: "Settings", view: "footer")])
        let after = try Self.affected(app)
        #expect(after["screen"] == ["Inbox": 2, "Compose": 1, "Settings": 1], "Inbox was counted for session 0 before the upgrade")
        #expect(after["kind"] == before["kind"] && after["keyboard_mode"] == before["keyboard_mode"])
    }

    /// A transaction that rolled back took a value's and a release's next numbers with it: the
    /// next values and releases get those numbers, and the rolled-back ones new numbers of
    /// their own, so no session counted for one is taken as counted for the other.
    @Test func aNumberOfARolledBackIngestIsNotUsedForAnotherValue() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let sessions = (0..<2).map { Self.sessionID($0) }
        #expect(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": sessions.map { Fixtures.session(id: $0) }]).status == 202)
        let failing = "00000000-0000-4000-8000-0000000000ff"
        func post(_ reports: [[String: Any]], drop: String? = nil) throws -> Int {
            var body: [String: Any] = ["reports": reports]
            if let drop { body["client_dropped"] = ["id": drop, "release": ["version": "14.2.0", "build": "31245"], "evicted": 1, "quarantined": 0] }
            return try app.client.postJSON("/v1/reports", token: key, json: body).status
        }
        #expect(try post([Self.report(sessions[0], screen: "Inbox")]) == 202)

        // The whole group commit fails after the reports were inserted, at its client_dropped row.
        let file = try app.sqlite.path
        try DatabaseQueue(path: file).write { db in
            try db.execute(sql: "CREATE TRIGGER planted_failure BEFORE INSERT ON client_drops WHEN NEW.id = '\(failing)' BEGIN SELECT RAISE(ABORT, 'planted'); END")
        }
        #expect(try post([Self.report(sessions[0], screen: "RolledBack"), Self.report(sessions[0], screen: "Inbox", version: "15.0.0")], drop: failing) == 503)
        try DatabaseQueue(path: file).write { try $0.execute(sql: "DROP TRIGGER planted_failure") }

        // A new value and a new release first (they take the numbers the rolled-back ones had),
        // then the rolled-back value and release again, all in session 1.
        #expect(try post([Self.report(sessions[1], screen: "Fresh"), Self.report(sessions[1], screen: "Inbox", version: "15.1.0")]) == 202)
        #expect(try post([Self.report(sessions[1], screen: "RolledBack", view: "footer"), Self.report(sessions[1], screen: "Inbox", version: "15.0.0")]) == 202)
        #expect(try Self.affected(app)["screen"] == ["Inbox": 1, "Fresh": 1, "RolledBack": 1])
        #expect(try Self.affected(app, version: "15.0.0")["screen"] == ["Inbox": 1])
        #expect(try app.sqlite.releaseDetail(app: "com.example.mail", release: ReleaseID(version: "15.0.0", build: "31245"))?.stats.affectedSessions == 1)
        let unresolved = try DatabaseQueue(path: file).read { db in
            try Int.fetchOne(db, sql: """
                SELECT (SELECT count(*) FROM session_value_marks WHERE value NOT IN (SELECT number FROM mark_values))
                     + (SELECT count(*) FROM session_affected_marks WHERE release NOT IN (SELECT ref FROM release_refs))
                """)
        }
        #expect(unresolved == 0)
    }

    /// The writer keeps at most so many value and release numbers in memory (each further one is
    /// looked up in `mark_values` or `release_refs` by the transactions that need it): a client
    /// inventing a version or a screen per report cannot grow it.
    @Test func theValueAndReleaseNumbersKeptInMemoryAreBounded() {
        var kept = MarkRefs.Numbers()
        var added = MarkRefs.Numbers()
        added.values = ["Inbox": 1, "Compose": 2, "Settings": 3]
        added.releases = Dictionary(uniqueKeysWithValues: (1...5).map { (Rollup.ReleaseKey(app: "a", version: "\($0)", build: "1"), Int64($0)) })
        kept.merge(added, valueLimit: 2, releaseLimit: 3)
        #expect(kept.values.count == 2 && kept.values.allSatisfy { added.values[$0.key] == $0.value })
        #expect(kept.releases.count == 3 && kept.releases.allSatisfy { added.releases[$0.key] == $0.value })
        kept.merge(added, valueLimit: 2, releaseLimit: 3)
        #expect(kept.values.count == 2 && kept.releases.count == 3)
    }
}
