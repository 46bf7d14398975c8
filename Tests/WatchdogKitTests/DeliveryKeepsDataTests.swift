import Foundation
import Gzip
import Testing
import TestSupport
import WatchdogHTTP
import WatchdogKit
import WatchdogWire

/// Delivery never loses data on a refusal: only a 2xx that accounts for the items removes
/// them; a whole-batch 400 is bisected down to the poison item; a full outbox evicts the
/// oldest and says so (`client_dropped`). Real outbox in a temp dir, real HTTP server.
@Suite struct DeliveryKeepsDataTests {
    static func error(_ status: Int, _ code: String, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers,
                     body: Array(#"{"error":{"code":"\#(code)","message":"\#(code) happened"}}"#.utf8))
    }

    static func outbox(capacity: Outbox.Capacity = Outbox.Capacity()) throws -> Outbox {
        try Outbox(directory: FileManager.default.temporaryDirectory.appendingPathComponent("wk-\(UUID())"), capacity: capacity,
                   fallbackRelease: Release(version: "14.2.0", build: "1"))
    }

    /// The JSON object of a request's gunzipped body.
    static func body(_ request: HTTPRequest) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] ?? [:]
    }

    @Test(arguments: [
        (401, "unauthorized"), (403, "forbidden"), (404, "not_found"), (413, "payload_too_large"), (415, "unsupported_media_type"),
        (405, "method_not_allowed"), (302, "moved"), (400, "some_proxy_error"),
    ])
    func aRefusalKeepsTheOutboxBacksOffAndTellsTheHostApp(status: Int, code: String) async throws {
        let server = try ScriptedServer(script: [Self.error(status, code), Self.error(status, code), DeliveryTests.accepted(2)])
        let clock = ManualClock(1000)
        let outbox = try Self.outbox()
        try outbox.persist(DeliveryTests.report())
        try outbox.persist(DeliveryTests.report())
        let logger = TaggedLogger(tag: "keyboard")
        let uploader = Uploader(outbox: outbox, endpoint: server.url, ingestKey: "k", clock: { clock.now }, random: { 1.0 }, logger: logger, maximumBackoff: 3)
        let heard = Heard()
        uploader.setStatusHandler { status in heard.append(status) }

        var waits: [Double] = []
        for _ in 0..<2 {
            guard case .waitingUntil(let due) = await uploader.drain() else { Issue.record("\(status): no wait"); return }
            waits.append(due - clock.now)
            #expect(outbox.count(.reports) == 2, "\(status): kept")
            clock.advance(due - clock.now)
        }
        #expect(waits == [1, 2], "\(status): backs off")
        let keyRefused = status == 401 || status == 403
        let expected: DeliveryStatus = keyRefused ? .ingestKeyRefused(status: status, message: "\(code) happened")
            // URLSession hands a 3xx over without its body: the message is the status then.
            : .refused(status: status, message: status == 413 ? "\(code) happened; batches now at most 450000 bytes" : status == 302 ? "status 302" : "\(code) happened")
        #expect(heard.all.first == expected, "\(status)")
        #expect(logger.recentLines().contains { $0.contains("ingest key refused (\(status))") } == keyRefused, "\(status): log line")
        #expect(await uploader.drain() == .drained)
        #expect(outbox.count(.reports) == 0)
        #expect(heard.all.last == .delivering, "\(status): recovery is heard too")
        #expect(outbox.quarantinedFiles(.reports) == 0)
    }

    @Test func backoffAndRetryAfterAreCapped() async throws {
        let server = try ScriptedServer(script: [
            HTTPResponse(status: 500), HTTPResponse(status: 500), HTTPResponse(status: 500), HTTPResponse(status: 500),
            Self.error(429, "rate_limited", headers: [("Retry-After", "86400")]),
        ])
        let clock = ManualClock(1000)
        let outbox = try Self.outbox()
        try outbox.persist(DeliveryTests.report())
        let uploader = Uploader(outbox: outbox, endpoint: server.url, ingestKey: "k", clock: { clock.now }, random: { 1.0 },
                                logger: TaggedLogger(tag: "t"), maximumBackoff: 5)
        var waits: [Double] = []
        for _ in 0..<5 {
            guard case .waitingUntil(let due) = await uploader.drain() else { Issue.record("no wait"); return }
            waits.append(due - clock.now)
            clock.advance(due - clock.now)
        }
        #expect(waits == [1, 2, 4, 5, 5], "exponential, then capped; Retry-After of a day waits the cap")
        #expect(outbox.count(.reports) == 1)
    }

    @Test func aTwoHundredThatDoesNotAccountForTheItemsRemovesNothing() async throws {
        let server = try ScriptedServer(script: [
            HTTPResponse(status: 200, headers: [("Content-Type", "text/html")], body: Array("<html>captive portal</html>".utf8)),
            DeliveryTests.accepted(1),  // says 1 item for a batch of 2
            HTTPResponse(status: 202, headers: [("Content-Type", "application/json")],
                         body: Array(#"{"accepted":1,"duplicates":0,"rejected":[{"index":1,"id":null,"error":{"code":"invalid_field","message":"bad"}}]}"#.utf8)),
            DeliveryTests.accepted(0),  // the rejected item's count (quarantined), on its own
        ])
        let clock = ManualClock(1000)
        let outbox = try Self.outbox()
        try outbox.persist(DeliveryTests.report())
        try outbox.persist(DeliveryTests.report())
        let uploader = Uploader(outbox: outbox, endpoint: server.url, ingestKey: "k", clock: { clock.now }, random: { 1.0 }, logger: TaggedLogger(tag: "t"))
        for _ in 0..<2 {
            guard case .waitingUntil(let due) = await uploader.drain() else { Issue.record("no wait"); return }
            #expect(outbox.count(.reports) == 2)
            clock.advance(due - clock.now)
        }
        #expect(await uploader.drain() == .drained, "a rejection listed in a 2xx is the server's last word on that item")
        #expect(outbox.count(.reports) == 0)
        #expect(outbox.quarantinedFiles(.reports) == 1, "the rejected one is set aside and counted")
    }

    @Test func aWholeBatch400IsBisectedAndOnlyThePoisonItemIsQuarantinedAndCounted() async throws {
        let server = try ScriptedServer(script: [
            Self.error(400, "invalid_json"),  // [0 1 2 3]
            DeliveryTests.accepted(2),         // [0 1]
            Self.error(400, "invalid_json"),  // [2 3]
            Self.error(400, "invalid_json"),  // [2]: quarantined
            DeliveryTests.accepted(1),         // [3], with client_dropped
        ])
        let outbox = try Self.outbox()
        for _ in 0..<4 { try outbox.persist(DeliveryTests.report()) }
        let poison = outbox.pending(.reports, limit: 4, maxBytes: 1 << 20)[2]
        let uploader = Uploader(outbox: outbox, endpoint: server.url, ingestKey: "k", clock: { 0 }, logger: TaggedLogger(tag: "t"))
        #expect(await uploader.drain() == .drained)
        let requests = server.requests
        #expect(try requests.map { (try Self.body($0)["reports"] as? [Any])?.count ?? -1 } == [4, 2, 2, 1, 1])
        #expect(outbox.count(.reports) == 0)
        #expect(outbox.quarantinedFiles(.reports) == 1)
        let quarantined = outbox.directory.appendingPathComponent("quarantine/reports/\(poison.file.lastPathComponent)")
        #expect(try Data(contentsOf: quarantined) == poison.json, "moved aside, not deleted")
        let last = try #require(requests.last)
        let dropped = try #require(try Self.body(last)["client_dropped"] as? [String: Any])
        #expect(dropped["quarantined"] as? Int == 1)
        #expect(dropped["evicted"] as? Int == 0)
        #expect(dropped["release"] as? [String: String] == ["version": "14.2.0", "build": "1"])
        #expect(outbox.unsentDrops().isEmpty, "acknowledged by the 202")
    }

    @Test func aFullOutboxEvictsTheOldestAndTheCountGoesUpOnceWithTheSameIdUntilAcknowledged() async throws {
        let outbox = try Self.outbox(capacity: Outbox.Capacity(items: 3, bytes: 1 << 20))
        var reports: [Report] = []
        for _ in 0..<5 {
            let report = DeliveryTests.report()
            reports.append(report)
            try outbox.persist(report)
        }
        #expect(outbox.count(.reports) == 3)
        #expect(!outbox.contains(id: reports[0].id) && !outbox.contains(id: reports[1].id), "the oldest went")
        #expect(reports[2...].allSatisfy { outbox.contains(id: $0.id) })
        #expect(outbox.unsentDrops().map(\.evicted) == [2])

        let server = try ScriptedServer(script: [HTTPResponse(status: 500), DeliveryTests.accepted(3), DeliveryTests.accepted(0)])
        let clock = ManualClock(1000)
        let uploader = Uploader(outbox: outbox, endpoint: server.url, ingestKey: "k", clock: { clock.now }, random: { 1.0 }, logger: TaggedLogger(tag: "t"))
        guard case .waitingUntil(let due) = await uploader.drain() else { Issue.record("no wait"); return }
        // Dropped while the first count is in flight: a new entry, the sent one keeps its numbers.
        try outbox.persist(DeliveryTests.report())
        #expect(outbox.unsentDrops().map(\.evicted) == [2, 1])
        clock.advance(due - clock.now)
        #expect(await uploader.drain() == .drained)
        let bodies = try server.requests.map(Self.body)
        let ids = bodies.map { ($0["client_dropped"] as? [String: Any])?["id"] as? String }
        #expect(ids.count == 3)
        #expect(ids[0] != nil && ids[0] == ids[1], "a retry carries the same id: the server counts it once")
        #expect(bodies.map { ($0["client_dropped"] as? [String: Any])?["evicted"] as? Int } == [2, 2, 1])
        #expect((bodies[2]["reports"] as? [Any])?.isEmpty == true, "the last count goes up with no report left to carry it")
        #expect(outbox.unsentDrops().isEmpty)
    }

    @Test func theByteCapEvictsTooAndQuarantineKeepsOnlyTheNewestFiles() throws {
        let size = try JSONEncoder().encode(DeliveryTests.report()).count
        let outbox = try Outbox(directory: FileManager.default.temporaryDirectory.appendingPathComponent("wk-\(UUID())"),
                                capacity: Outbox.Capacity(items: 100, bytes: size * 3 + size / 2), quarantineLimit: 2,
                                fallbackRelease: Release(version: "9.9", build: "9"))
        for _ in 0..<6 { try outbox.persist(DeliveryTests.report()) }
        #expect(outbox.count(.reports) == 3, "three fit in the byte cap")
        #expect(outbox.unsentDrops().map(\.evicted) == [3])
        #expect(outbox.unsentDrops().first?.release == Release(version: "14.2.0", build: "1"), "counted under the items' own release")

        let items = outbox.pending(.reports, limit: 3, maxBytes: 1 << 20)
        try Data("{\"torn".utf8).write(to: items[0].file)
        outbox.quarantine(outbox.pending(.reports, limit: 3, maxBytes: 1 << 20), kind: .reports)
        #expect(outbox.count(.reports) == 0)
        #expect(outbox.quarantinedFiles(.reports) == 2, "the newest two kept on disk")
        let drops = outbox.unsentDrops()
        #expect(drops.map(\.quarantined).reduce(0, +) == 3, "all three counted")
        #expect(drops.first { $0.release == Release(version: "9.9", build: "9") }?.quarantined == 1, "an unreadable one under the app's release")
    }
}

/// What a status handler heard, from any thread.
final class Heard: @unchecked Sendable {
    private let lock = NSLock()
    private var statuses: [DeliveryStatus] = []
    func append(_ status: DeliveryStatus) { lock.lock(); statuses.append(status); lock.unlock() }
    var all: [DeliveryStatus] { lock.lock(); defer { lock.unlock() }; return statuses }
}
