import Foundation
import Gzip
import Testing
import TestSupport
import WatchdogHTTP
import WatchdogKit
import WatchdogWire

@Suite struct DeliveryTests {
    /// Now, as a client writes `occurred_at` and `started_at`.
    static func now() -> String {
        Timestamp.format(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
    }

    static func report() -> Report {
        Report(id: UUID().uuidString.lowercased(), kind: "view_frame_mismatch", occurredAt: now(), app: "com.example.mail",
               release: Release(version: "14.2.0", build: "1"), appState: "active",
               view: ViewFrames(expected: Frame(x: 0, y: 0, width: 1, height: 1), actual: Frame(x: 0, y: 9, width: 1, height: 1)))
    }

    static func accepted(_ count: Int) -> HTTPResponse {
        HTTPResponse(status: 202, headers: [("Content-Type", "application/json")], body: Array(#"{"accepted":\#(count),"duplicates":0,"rejected":[]}"#.utf8))
    }

    func outbox() throws -> Outbox {
        try Outbox(directory: FileManager.default.temporaryDirectory.appendingPathComponent("wk-\(UUID())"))
    }

    @Test func a429WithRetryAfterDelaysTheNextAttemptByAtLeastThatLong() async throws {
        let server = try ScriptedServer(script: [
            HTTPResponse(status: 429, headers: [("Retry-After", "2")], body: Array(#"{"error":{"code":"rate_limited","message":"slow down"}}"#.utf8)),
            Self.accepted(1),
        ])
        let clock = ManualClock(1000)
        let outbox = try outbox()
        try outbox.persist(Self.report())
        let uploader = Uploader(outbox: outbox, endpoint: server.url, ingestKey: "k", clock: { clock.now }, random: { 0.5 }, logger: TaggedLogger(tag: "t"))

        let first = await uploader.drain()
        #expect(first == .waitingUntil(1002))
        #expect(server.requests.count == 1)
        clock.advance(1.9)
        #expect(await uploader.drain() == .waitingUntil(1002), "not due yet")
        #expect(server.requests.count == 1)
        clock.advance(0.1)
        #expect(await uploader.drain() == .drained)
        #expect(server.requests.count == 2)
        #expect(outbox.count(.reports) == 0)
    }

    @Test func failuresBackOffExponentiallyWithJitter() async throws {
        let server = try ScriptedServer(script: [
            HTTPResponse(status: 500), HTTPResponse(status: 502), HTTPResponse(status: 500), Self.accepted(1),
        ])
        let clock = ManualClock(1000)
        let outbox = try outbox()
        try outbox.persist(Self.report())
        let uploader = Uploader(outbox: outbox, endpoint: server.url, ingestKey: "k", clock: { clock.now }, random: { 1.0 }, logger: TaggedLogger(tag: "t"))
        var delays: [Double] = []
        for _ in 0..<3 {
            guard case .waitingUntil(let due) = await uploader.drain() else { Issue.record("no wait"); return }
            delays.append(due - clock.now)
            clock.advance(due - clock.now)
        }
        #expect(delays == [1, 2, 4])
        #expect(outbox.count(.reports) == 1, "kept through transient failures")
        #expect(await uploader.drain() == .drained)
        #expect(outbox.count(.reports) == 0, "delivered")
    }

    @Test func uploadsAreGzippedBatchesOfAtMost500SessionsFirst() async throws {
        let server = try ScriptedServer(script: [Self.accepted(1), Self.accepted(500), Self.accepted(100)])
        let outbox = try outbox()
        for _ in 0..<600 { try outbox.persist(Self.report()) }
        try outbox.persist(SessionStart(id: UUID().uuidString.lowercased(), startedAt: Self.now(), app: "com.example.mail", release: Release(version: "14.2.0", build: "1")))
        let uploader = Uploader(outbox: outbox, endpoint: server.url, ingestKey: "secret", clock: { 0 }, logger: TaggedLogger(tag: "t"))
        #expect(await uploader.drain() == .drained)
        let requests = server.requests
        #expect(requests.map(\.path) == ["/v1/sessions", "/v1/reports", "/v1/reports"])
        #expect(requests.allSatisfy { $0.headers["authorization"] == "Bearer secret" && $0.headers["content-encoding"] == "gzip" })
        let sizes = try requests.map { request in
            let json = try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any]
            return (json?["reports"] as? [Any] ?? json?["sessions"] as? [Any])?.count ?? -1
        }
        #expect(sizes == [1, 500, 100])
    }

    @Test func retryAfterIsReadAsSecondsOrAsAnHTTPDate() {
        #expect(Uploader.retryAfterSeconds("2") == 2)
        #expect(Uploader.retryAfterSeconds("-5") == 0)
        let inTenSeconds = Date().addingTimeInterval(10)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let seconds = Uploader.retryAfterSeconds(formatter.string(from: inTenSeconds)) ?? -1
        #expect(seconds > 8 && seconds <= 10)
        #expect(Uploader.retryAfterSeconds("soon") == nil)
    }

    @Test func theOutboxKeepsItemsAcrossInstancesAndIgnoresTornWrites() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wk-\(UUID())")
        let report = Self.report()
        try Outbox(directory: directory).persist(report)
        let torn = directory.appendingPathComponent("reports/999-torn.json.tmp")
        try Data("{\"id\": \"tor".utf8).write(to: torn)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: torn.path)
        let fresh = directory.appendingPathComponent("reports/998-writing.json.tmp")
        try Data("{".utf8).write(to: fresh)
        let reopened = try Outbox(directory: directory)
        let pending = reopened.pending(.reports, limit: 10, maxBytes: 1 << 20)
        #expect(pending.count == 1)
        #expect(try JSONDecoder().decode(Report.self, from: pending[0].json) == report)
        #expect(!FileManager.default.fileExists(atPath: torn.path), "an old torn write is removed")
        #expect(FileManager.default.fileExists(atPath: fresh.path), "a write that may be in progress is left alone")
        #expect(reopened.contains(id: report.id))
    }
}
