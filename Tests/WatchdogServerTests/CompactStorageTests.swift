import Foundation
import GRDB
import Gzip
import Testing
@testable import WatchdogStore
import WatchdogTesting
import WatchdogWire

/// Reports and sessions are stored compressed with compact ids (issue 14): the client's exact
/// bytes come back, ids keep their identity, and an existing data dir is converted.
@Suite(.enabled(if: TestStore.isSQLite, "reads and migrates the SQLite file")) struct CompactStorageTests {
    /// One report as a client might spell it: odd spacing, escapes, non-ASCII, a long log.
    static func rawReport(id: String, session: String = "S-compact", screen: String = #"Compose\u00e9\"Screen\""#) -> String {
        #"{ "id" :"\#(id)","kind":"view_frame_mismatch" , "occurred_at": "\#(occurredAt)", "app": "com.example.mail", "#
            + #""release": {"version": "14.2.0", "build": "31245", "channel": "beta"}, "session_id": "\#(session)", "install_id": "I-9", "#
            + #""app_state": "active", "screen": "\#(screen)", "#
            + #""view": {"name": "ツールバー", "expected": {"x": 0, "y": 228.5, "width": 390, "height": 44}, "#
            + #""actual": {"x": 0, "y": 264, "width": 390, "height": 44}}, "#
            + #""logs": [\#(Array(repeating: "\"[keyboard][tracker] keyboardWillChangeFrame: calculated height - 252.0\"", count: 12).joined(separator: ", "))], "#
            + #""attributes": {"emoji": "🙂", "tab": "a\tb"}}"#
    }

    /// When `rawReport` happened: 10:00:01.001 UTC on the fixture reports' day.
    static let occurredAt = Timestamp.format(milliseconds: FixtureDay.reports.milliseconds(10, 0, 1) + 1)

    /// The n-th session of a test, as a UUID (a start needs one).
    static func sessionID(_ number: Int) -> String {
        String(format: "00000000-0000-4000-8000-%012d", number)
    }

    static func post(_ app: TestApplication, key: String, _ reports: [String]) throws -> [String: Any] {
        let body = Array(("{\"reports\": [" + reports.joined(separator: ",\n") + "]}").utf8)
        let answer = try app.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: body)
        #expect(answer.status == 202, "\(answer.text)")
        return answer.json
    }

    /// The report as `GET /v1/reports/{id}` returns it: the bytes after `"report":`.
    static func storedBytes(_ app: TestApplication, viewer: String, id: String) throws -> String {
        let answer = try app.client.request("GET", "/v1/reports/\(id)", token: viewer)
        #expect(answer.status == 200, "\(answer.text)")
        guard let start = answer.text.range(of: "\"report\":") else { return "" }
        return String(answer.text[start.upperBound...].dropLast())
    }

    @Test func aReportComesBackByteForByteAndTakesAFractionOfItsSize() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let id = UUID().uuidString.lowercased()
        let raw = Self.rawReport(id: id)
        #expect(try Self.post(app, key: key, [raw])["accepted"] as? Int == 1)
        #expect(try Self.storedBytes(app, viewer: viewer, id: id) == raw)
        let (type, size) = try DatabaseQueue(path: try app.sqlite.path).read { db in
            try Row.fetchOne(db, sql: "SELECT typeof(body), length(body) FROM reports").map { ($0[0] as String, $0[1] as Int) } ?? ("", 0)
        }
        #expect(type == "blob")
        #expect(size * 3 < raw.utf8.count, "\(size) bytes stored for \(raw.utf8.count)")
    }

    /// A session id whose 16 bytes spell another session's UUID is another session (session
    /// ids in reports are any text; UUIDs are keyed as their bytes): the UUID session, started,
    /// is affected; the text one, which no start can name, is an unknown session.
    @Test func aUUIDSessionAndATextSessionWithTheSameBytesAreTwoSessions() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let text = "abcdefghijklmnop"
        let uuid = "61626364-6566-6768-696a-6b6c6d6e6f70"
        #expect(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": [Fixtures.session(id: uuid)]]).json["accepted"] as? Int == 1)
        let reports = [text, uuid, uuid].map { Self.rawReport(id: UUID().uuidString.lowercased(), session: $0) }
        #expect(try Self.post(app, key: key, reports)["accepted"] as? Int == 3)
        let releases = try app.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer).json
        let release = try #require((releases["releases"] as? [[String: Any]])?.first)
        #expect(release["affected_sessions"] as? Int == 1)
        #expect(release["unknown_session_reports"] as? Int == 1, "the text session is not the started UUID one")
        // The row says so too (what a copy to PostgreSQL carries), written with the insert.
        let marked = try DatabaseQueue(path: try app.sqlite.path).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM reports WHERE unknown_session = 1") }
        #expect(marked == 1)
        let issues = try app.client.request("GET", "/v1/apps/com.example.mail/issues?release=14.2.0", token: viewer).json
        #expect((issues["issues"] as? [[String: Any]])?.first?["affected_sessions"] as? Int == 1)
    }

    /// A release's reports of every kind, newest first, each once: they are read per kind on
    /// (release, kind) and merged, there being no index on the release alone.
    @Test func aReleasesReportsOfSeveralKindsComeNewestFirstAcrossPages() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        var posted: [String] = []
        for index in 0..<14 {
            var report = try Fixtures.freshReport(kind: ["view_frame_mismatch", "x-other", "x-third"][index % 3 == 0 ? 0 : index % 2 + 1])
            if index == 7 { report["release"] = ["version": "9.9.9", "build": "1"] }
            #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": [report]]).status == 202)
            if index != 7 { posted.append(try #require(report["id"] as? String)) }
        }
        var listed: [String] = []
        var cursor: String?
        repeat {
            let path = "/v1/apps/com.example.mail/reports?release=14.2.0&limit=3" + (cursor.map { "&cursor=\($0)" } ?? "")
            let page = try app.client.request("GET", path, token: viewer).json
            listed += (page["reports"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            cursor = page["next_cursor"] as? String
        } while cursor != nil && listed.count < 100
        #expect(listed == posted.reversed(), "newest first, each once, only this release's")
    }

    /// A data dir written before the compaction (text ids and bodies, text-keyed session
    /// tables) answers the same afterwards, dedupes the same ids and is smaller.
    @Test func anExistingDataDirIsCompactedKeepingEveryAnswerAndEveryByte() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let ids = (0..<200).map { _ in UUID().uuidString.lowercased() }
        // Started first: a report counts toward affected sessions only when its session was started.
        let sessions = (0..<40).map { Fixtures.session(id: Self.sessionID($0)) }
        #expect(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": sessions]).status == 202)
        for start in stride(from: 0, to: ids.count, by: 50) {
            let batch = ids[start..<start + 50].enumerated().map { Self.rawReport(id: $1, session: Self.sessionID(($0 + start) % 37)) }
            #expect(try Self.post(app, key: key, batch)["accepted"] as? Int == 50)
        }
        let paths = ["/v1/apps/com.example.mail/releases", "/v1/apps/com.example.mail/issues?release=14.2.0",
                     "/v1/apps/com.example.mail/reports?limit=500", "/v1/apps/com.example.mail/reports.ndjson"]
        func answers() throws -> [String] {
            try paths.map { try app.client.request("GET", $0, token: viewer).text }
                + [ids[0], ids[1], ids[199]].map { try Self.storedBytes(app, viewer: viewer, id: $0) }
        }
        let before = try answers()
        #expect(before[4] == Self.rawReport(id: ids[0], session: Self.sessionID(0)))
        try app.stop()

        let file = try app.sqlite.path
        let queue = try DatabaseQueue(path: file)
        try queue.write { try OldSchema.undoCompactStorage($0) }
        try queue.writeWithoutTransaction { try $0.execute(sql: "VACUUM") }
        let oldBytes = try queue.read { try Int.fetchOne($0, sql: "SELECT sum(pgsize) FROM dbstat WHERE name IN ('reports', 'sessions')") ?? 0 }
        #expect(try queue.read { try String.fetchOne($0, sql: "SELECT typeof(body) FROM reports LIMIT 1") } == "text")
        try queue.close()

        try app.restart()
        #expect(try answers() == before)
        // The same ids are still duplicates; a session seen before is still affected already,
        // also by another issue.
        let again = try Self.post(app, key: key, [Self.rawReport(id: ids[0].uppercased()), Self.rawReport(id: ids[5]),
                                                     Self.rawReport(id: UUID().uuidString.lowercased(), session: Self.sessionID(3), screen: "Other")])
        #expect(again["accepted"] as? Int == 1 && again["duplicates"] as? Int == 2)
        func release(_ text: String) -> [String: Any] {
            ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]).flatMap { ($0["releases"] as? [[String: Any]])?.first } ?? [:]
        }
        let after = release(try app.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer).text)
        #expect(after["reports"] as? Int == 201 && release(before[0])["reports"] as? Int == 200)
        #expect(after["affected_sessions"] as? Int == 37, "S-3 was affected before the migration: not counted again")
        try app.stop()
        let newBytes = try DatabaseQueue(path: file).read { try Int.fetchOne($0, sql: "SELECT sum(pgsize) FROM dbstat WHERE name IN ('reports', 'sessions')") ?? 0 }
        #expect(newBytes * 2 < oldBytes, "reports and sessions: \(oldBytes) bytes before, \(newBytes) after")
    }
}

/// The codec under `StoredBody`: lossless on any bytes, and a damaged or foreign stream is an
/// error, never other bytes.
@Suite struct PresetDictionaryCodecTests {
    @Test func anyBytesRoundTrip() throws {
        let codec = PresetDictionaryCodec(dictionary: StoredBody.v1)
        var generator = SystemRandomNumberGenerator()
        let inputs: [[UInt8]] = [[], Array("{}".utf8), StoredBody.v1, (0..<70_000).map { _ in UInt8.random(in: 0...255, using: &generator) },
                                 Array(repeating: 0x41, count: 1 << 20)]
        for input in inputs {
            let compressed = try #require(input.withUnsafeBytes { codec.compress($0) })
            #expect(try compressed.withUnsafeBytes { try codec.decompress($0, limit: 2 << 20) } == input)
        }
    }

    @Test func damagedForeignOrOversizedStreamsAreRefused() throws {
        let codec = PresetDictionaryCodec(dictionary: StoredBody.v1)
        let input = Array(CompactStorageTests.rawReport(id: "x").utf8)
        let compressed = try #require(input.withUnsafeBytes { codec.compress($0) })
        var damaged = compressed
        damaged[damaged.count / 2] ^= 0x55
        #expect(throws: PresetDictionaryCodec.Failure.self) { try damaged.withUnsafeBytes { try codec.decompress($0, limit: 1 << 20) } }
        #expect(throws: PresetDictionaryCodec.Failure.self) { try compressed.dropLast(3).withUnsafeBytes { try codec.decompress($0, limit: 1 << 20) } }
        let other = PresetDictionaryCodec(dictionary: Array("another dictionary".utf8))
        #expect(throws: PresetDictionaryCodec.Failure.self) { try compressed.withUnsafeBytes { try other.decompress($0, limit: 1 << 20) } }
        #expect(throws: PresetDictionaryCodec.Failure.tooLarge(limit: 100)) { try compressed.withUnsafeBytes { try codec.decompress($0, limit: 100) } }
        // The codec is still good after each failure.
        #expect(try compressed.withUnsafeBytes { try codec.decompress($0, limit: 1 << 20) } == input)
    }
}
