import Foundation
import GRDB
import Gzip
import PostgresClient
import Testing
@testable import WatchdogStore
import WatchdogTesting

/// Stored bodies are zstd frames with a trained dictionary (issue 26). Bodies the previous
/// release wrote (deflate with the preset dictionary `StoredBody.v1`) stay in the store as they
/// are and read the same, byte for byte, on SQLite and PostgreSQL.
@Suite struct StoredBodyCodecTests {
    @Test func bodiesWrittenByThePreviousCodecReadTheSameAfterTheUpgrade() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let ids = (0..<6).map { _ in UUID().uuidString.lowercased() }
        let raws = ids.map { CompactStorageTests.rawReport(id: $0) }
        #expect(try CompactStorageTests.post(app, key: key, raws)["accepted"] as? Int == 6)
        let export = try app.client.request("GET", "/v1/apps/com.example.mail/reports.ndjson", token: viewer).text
        try app.stop()
        #expect(try Self.bodies(app).values.allSatisfy { $0.starts(with: ZstdBodyCodec.magic) }, "the new codec wrote them")

        // Half of them as the previous release wrote them: its codec, its dictionary, its parameters.
        try Self.rewriteEveryOtherBody(app) { text in
            var text = text
            return try #require(text.withUTF8 { utf8 in StoredBody.zlib { $0.compress(UnsafeRawBufferPointer(utf8)) } })
        }
        let rewritten = try Self.bodies(app).values
        #expect(rewritten.filter { $0.starts(with: ZstdBodyCodec.magic) }.count == 3)
        let zlib = rewritten.filter { !$0.starts(with: ZstdBodyCodec.magic) && $0.count > 2 && $0[0] & 0x0F == 8 && (Int($0[0]) << 8 | Int($0[1])) % 31 == 0 }
        #expect(zlib.count == 3, "zlib streams (CMF deflate, header check)")

        try app.restart()
        for (id, raw) in zip(ids, raws) {
            #expect(try CompactStorageTests.storedBytes(app, viewer: viewer, id: id) == raw)
        }
        #expect(try app.client.request("GET", "/v1/apps/com.example.mail/reports.ndjson", token: viewer).text == export)
    }

    /// Every stored report body, by row.
    static func bodies(_ app: TestApplication) throws -> [Int64: [UInt8]] {
        if let url = try TestStore.postgresURL(directory: app.dataDirectory) {
            let connection = try PostgresConnection(url: url)
            return Dictionary(uniqueKeysWithValues: try connection.query("SELECT sequence, body FROM reports").map { ($0.integer(0), $0.bytes(1)) })
        }
        return try DatabaseQueue(path: try app.sqlite.path).read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT rowid, body FROM reports").map { ($0[0] as Int64, Array($0[1] as Data)) })
        }
    }

    /// Rewrites the body of every other report (by row) as `encode` makes it from the text.
    static func rewriteEveryOtherBody(_ app: TestApplication, _ encode: (String) throws -> [UInt8]) throws {
        let rows = try bodies(app).sorted { $0.key < $1.key }.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        let bodies = try rows.map { ($0.key, try encode(try StoredBody.text(fromCompressed: $0.value))) }
        if let url = try TestStore.postgresURL(directory: app.dataDirectory) {
            let connection = try PostgresConnection(url: url)
            for (row, body) in bodies { _ = try connection.query("UPDATE reports SET body = $1 WHERE sequence = $2", [body, row]) }
        } else {
            try DatabaseQueue(path: try app.sqlite.path).write { db in
                for (row, body) in bodies { try db.execute(sql: "UPDATE reports SET body = ? WHERE rowid = ?", arguments: [Data(body), row]) }
            }
        }
    }
}

/// The codec under `StoredBody` since issue 26: lossless on any bytes, and a damaged, foreign
/// or oversized frame is an error, never other bytes.
@Suite struct ZstdBodyCodecTests {
    @Test func anyBytesRoundTrip() throws {
        let codec = ZstdBodyCodec()
        var generator = SystemRandomNumberGenerator()
        let inputs: [[UInt8]] = [[], Array("{}".utf8), Array(CompactStorageTests.rawReport(id: "x").utf8),
                                 (0..<70_000).map { _ in UInt8.random(in: 0...255, using: &generator) }, Array(repeating: 0x41, count: 1 << 20)]
        for input in inputs {
            let compressed = try #require(input.withUnsafeBytes { codec.compress($0) })
            #expect(compressed.starts(with: ZstdBodyCodec.magic))
            #expect(try compressed.withUnsafeBytes { try codec.decompress($0, limit: 2 << 20) } == input)
        }
    }

    @Test func damagedForeignOrOversizedFramesAreRefused() throws {
        let codec = ZstdBodyCodec()
        let input = Array(CompactStorageTests.rawReport(id: "x").utf8)
        let compressed = try #require(input.withUnsafeBytes { codec.compress($0) })
        #expect(compressed.count * 4 < input.count, "\(compressed.count) bytes for \(input.count)")
        var damaged = compressed
        damaged[damaged.count / 2] ^= 0x55
        #expect(throws: ZstdBodyCodec.Failure.self) { try damaged.withUnsafeBytes { try codec.decompress($0, limit: 1 << 20) } }
        #expect(throws: ZstdBodyCodec.Failure.self) { try compressed.dropLast(3).withUnsafeBytes { try codec.decompress($0, limit: 1 << 20) } }
        // A frame naming another dictionary (its id is the 4 bytes after the frame header's descriptor).
        var foreign = compressed
        foreign[5] ^= 0x01
        #expect(throws: ZstdBodyCodec.Failure.self) { try foreign.withUnsafeBytes { try codec.decompress($0, limit: 1 << 20) } }
        #expect(throws: ZstdBodyCodec.Failure.tooLarge(limit: 100)) { try compressed.withUnsafeBytes { try codec.decompress($0, limit: 100) } }
        // The codec is still good after each failure.
        #expect(try compressed.withUnsafeBytes { try codec.decompress($0, limit: 1 << 20) } == input)
    }
}
