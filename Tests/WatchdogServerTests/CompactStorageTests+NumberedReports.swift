import Foundation
import GRDB
import Testing
@testable import WatchdogStore
import WatchdogTesting

/// Reports keyed by numbers instead of their texts (`2026-11-26-numbered-reports`): an existing
/// data dir answers every report query the same after the upgrade, in fewer index bytes, and
/// deleting a release still deletes its reports.
extension CompactStorageTests {
    /// Bytes of the reports table's indexes, and whether its app column holds text.
    static func reportIndexBytes(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: """
            SELECT sum(pgsize) FROM dbstat WHERE name IN ('sqlite_autoindex_reports_1', 'reports_by_release_kind', 'reports_by_fingerprint')
            """) ?? 0
    }

    @Test func reportsStoredWithTheirTextsAnswerTheSameOnceNumberedInFewerIndexBytes() throws {
        let app = try TestApplication()
        let keys = ["com.example.mail": try app.addApp("com.example.mail"), "com.example.notes": try app.addApp("com.example.notes")]
        let viewer = try app.addToken(role: "viewer")
        let fixtures = try Fixtures.validReports()
        var ids: [String] = []
        for start in stride(from: 0, to: 240, by: 40) {
            var batches: [String: [[String: Any]]] = [:]
            for index in start..<start + 40 {
                var report = fixtures[index % fixtures.count]
                let name = index % 4 == 0 ? "com.example.notes" : "com.example.mail"
                report["id"] = UUID().uuidString.lowercased()
                report["app"] = name
                var release: [String: Any] = ["version": index % 3 == 0 ? "14.1.0" : "14.2.0", "build": "31245"]
                if index % 7 != 0 { release["channel"] = index % 2 == 0 ? "beta" : "production" }
                report["release"] = release
                if index % 5 == 0 { report.removeValue(forKey: "screen") } else { report["screen"] = ["Inbox", "Compose", "Réglages"][index % 3] }
                ids.append(report["id"] as? String ?? "")
                batches[name, default: []].append(report)
            }
            for (name, reports) in batches {
                let answer = try app.client.postJSON("/v1/reports", token: keys[name] ?? "", json: ["reports": reports])
                #expect(answer.status == 202 && answer.json["accepted"] as? Int == reports.count, "\(answer.text)")
            }
        }
        let listed = try app.client.request("GET", "/v1/apps/com.example.mail/reports?limit=500", token: viewer).json["reports"] as? [[String: Any]] ?? []
        #expect(listed.count == 180)
        let fingerprint = try #require(listed.first?["fingerprint"] as? String)
        let kind = try #require(listed.last?["kind"] as? String)
        let mail = "/v1/apps/com.example.mail/reports"
        let paths = [
            "\(mail)?limit=500", "\(mail)?release=14.1.0", "\(mail)?release=14.2.0&kind=\(kind)", "\(mail)?kind=\(kind)&limit=30",
            "\(mail)?screen=R%C3%A9glages", "\(mail)?screen=Never", "\(mail)?fingerprint=\(fingerprint)", "\(mail)?fingerprint=\(fingerprint)&release=14.2.0",
            "\(mail)?release=14.2.0&limit=7", "\(mail).ndjson", "/v1/apps/com.example.notes/reports?limit=500", "/v1/apps/com.example.mail/issues",
        ]
        func answers() throws -> [String] {
            try paths.map { try app.client.request("GET", $0, token: viewer).text }
                + [ids[0], ids[1], ids[239]].map { try Self.storedBytes(app, viewer: viewer, id: $0) }
        }
        let before = try answers()
        #expect(before[5].contains(#""reports":[]"#), "no report has that screen: \(before[5].prefix(200))")
        #expect(!before[4].contains(#""reports":[]"#) && !before[6].contains(#""reports":[]"#))
        try app.stop()

        let file = try app.sqlite.path
        let queue = try DatabaseQueue(path: file)
        try queue.write { try OldSchema.undoNumberedReports($0) }
        try queue.writeWithoutTransaction { try $0.execute(sql: "VACUUM") }
        let oldBytes = try queue.read(Self.reportIndexBytes)
        #expect(try queue.read { try String.fetchOne($0, sql: "SELECT typeof(app) || ' ' || typeof(fingerprint) FROM reports LIMIT 1") } == "text text")
        try queue.close()

        try app.restart()
        #expect(try answers() == before)
        let types = try DatabaseQueue(path: file).read { db in
            try String.fetchAll(db, sql: "SELECT DISTINCT typeof(app) || typeof(release) || typeof(kind) || typeof(fingerprint) FROM reports")
        }
        #expect(types == ["integerintegerintegerinteger"])
        // The same ids are still duplicates, per app.
        let release: [String: Any] = ["version": "14.2.0", "build": "31245"]
        let again = try app.client.postJSON("/v1/reports", token: keys["com.example.mail"] ?? "", json: ["reports": [
            fixtures[1].merging(["id": ids[1], "app": "com.example.mail", "release": release]) { $1 },
            fixtures[1].merging(["id": ids[0], "app": "com.example.mail", "release": release]) { $1 },
        ]]).json
        #expect(again["accepted"] as? Int == 1 && again["duplicates"] as? Int == 1, "ids[0] was the notes app's: \(again)")

        // Deleting a release deletes its reports, and only that app's.
        _ = try app.sqlite.deleteRelease(app: "com.example.mail", release: ReleaseID(version: "14.1.0", build: "31245"))
        try app.stop()
        let left = try DatabaseQueue(path: file).read { db in
            try String.fetchAll(db, sql: "SELECT app || ' ' || version || ' ' || count(*) FROM report_texts GROUP BY app, version ORDER BY app, version")
        }
        #expect(left == ["com.example.mail 14.2.0 121", "com.example.notes 14.1.0 20", "com.example.notes 14.2.0 40"])
        let vacuumed = try DatabaseQueue(path: file)
        try vacuumed.writeWithoutTransaction { try $0.execute(sql: "VACUUM") }
        let newBytes = try vacuumed.read(Self.reportIndexBytes)
        // Few rows here, so pages are mostly empty: the benchmark's figure is in docs/performance.md.
        #expect(newBytes < oldBytes, "the reports' indexes: \(oldBytes) bytes with texts, \(newBytes) numbered")
    }
}

/// A re-sent report id is a duplicate whatever texts it carries: it hands out no number.
extension CompactStorageTests {
    /// Rows of `release_refs` and `mark_values`, read from the file.
    static func numberRows(_ app: TestApplication) throws -> [Int] {
        try DatabaseQueue(path: try app.sqlite.path).read { db in
            try ["release_refs", "mark_values"].map { try Int.fetchOne(db, sql: "SELECT count(*) FROM \($0)") ?? 0 }
        }
    }

    @Test func aStoredIdResentWithNewTextsIsADuplicateAndAddsNoNumber() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let stored = try Fixtures.freshReport(kind: "x-glitch")
        let first = try app.client.postJSON("/v1/reports", token: key, json: ["reports": [stored]])
        #expect(first.status == 202 && first.json["accepted"] as? Int == 1, "\(first.text)")
        let before = try Self.numberRows(app)

        // The same id with a version, kind, screen and channel never stored, next to a new
        // report with the stored one's texts; then again after a restart (no number in memory).
        var resent = stored
        resent["release"] = ["version": "99.0.0", "build": "1", "channel": "never-stored"]
        resent["kind"] = "x-never-stored"
        resent["screen"] = "NeverStored"
        for round in 0..<2 {
            var fresh = stored
            fresh["id"] = UUID().uuidString.lowercased()
            let answer = try app.client.postJSON("/v1/reports", token: key, json: ["reports": [resent, fresh]])
            #expect(answer.status == 202 && answer.json["accepted"] as? Int == 1 && answer.json["duplicates"] as? Int == 1, "round \(round): \(answer.text)")
            #expect(try Self.numberRows(app) == before, "round \(round): release_refs and mark_values rows")
            try app.restart()
        }
        #expect(try app.storedReports().filter { $0.id == stored["id"] as? String }.map(\.kind) == ["x-glitch"])
    }
}
