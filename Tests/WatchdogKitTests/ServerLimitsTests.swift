import Foundation
import Testing
import TestSupport
import WatchdogHTTP
import WatchdogKit
import WatchdogWire

/// Nothing lost in silence: what the SDK names is cut to the server's limits before it is
/// saved, and an item the server still rejects is counted, not just deleted.
@Suite struct ServerLimitsTests {
    /// What `String(describing: type(of: hostingController))` gives for a SwiftUI screen with two
    /// modifiers: over the server's 128 characters for `screen`.
    static let hostingControllerName =
        "UIHostingController<ModifiedContent<ModifiedContent<ChatView, _EnvironmentKeyWritingModifier<Optional<WatchdogAgent>>>, _SafeAreaRegionsIgnoringLayout>>"

    static var now: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
    static var occurredAt: String { Timestamp.format(milliseconds: now) }

    @Test func aHostingControllersGenericTypeIsSavedAsItsNameAndTheServerTakesTheReport() throws {
        #expect(Self.hostingControllerName.count > Limits.screenLength)
        let outbox = try Outbox(directory: FileManager.default.temporaryDirectory.appendingPathComponent("wk-\(UUID())"))
        var report = Report(id: UUID().uuidString.lowercased(), kind: "interaction_lock", occurredAt: Self.occurredAt, app: "com.example.chat",
                            release: Release(version: "2.0", build: "7"), appState: "active", screen: Self.hostingControllerName)
        report.lock = InteractionLock(durationS: 12, flags: ["automatic": true, "push": true])
        try outbox.persist(report)
        let saved = try JSONDecoder().decode(Report.self, from: try #require(outbox.pending(.reports, limit: 1, maxBytes: 1 << 20).first).json)
        #expect(saved.screen == "UIHostingController")
        #expect(throws: Never.self) { try ReportValidator(nowMilliseconds: Self.now).validate(saved) }
    }

    @Test func namesStillTooLongAreCutAtACharacterBoundaryAndEveryFieldFits() throws {
        var report = Report(id: UUID().uuidString.lowercased(), kind: "view_frame_mismatch", occurredAt: Self.occurredAt, app: "com.example.chat",
                            release: Release(version: "2.0", build: "7"), appState: "active",
                            screen: String(repeating: "Thread", count: 30) + "<Int>",
                            view: ViewFrames(name: String(repeating: "é", count: 200) + "\u{0007}",
                                             expected: Frame(x: 0, y: 0, width: 1, height: 1), actual: Frame(x: 0, y: 9, width: 1, height: 1)))
        report.keyboard = KeyboardState(visible: true, inputMode: String(repeating: "ja-JP-", count: 20), notification: "keyboardWillShow")
        report.attributes = Dictionary(uniqueKeysWithValues: (0..<40).map { ("key\($0)" + String(repeating: "k", count: 70), String(repeating: "v", count: 300)) })
        let fitted = ReportFitting.fit(report)
        #expect(fitted.screen?.unicodeScalars.count == 128 && fitted.screen?.hasSuffix("…") == true, "generic arguments go first, then the rest is cut")
        #expect(fitted.screen?.contains("<") == false)
        #expect(fitted.view?.name?.unicodeScalars.count == 128 && fitted.view?.name?.hasPrefix("éé") == true)
        #expect(fitted.keyboard?.inputMode?.unicodeScalars.count == Limits.shortTextLength)
        #expect(fitted.keyboard?.notification == "keyboardWillShow", "a name within its limit is left alone")
        #expect(fitted.attributes?.count == Limits.attributes)
        #expect(throws: Never.self) { try ReportValidator(nowMilliseconds: Self.now).validate(fitted) }
        #expect(ReportFitting.name("UIHostingController<ChatView>", limit: 128) == "UIHostingController<ChatView>", "short generic names keep their arguments")
        #expect(ReportFitting.name("Outer<" + String(repeating: "A", count: 200) + ">.Inner", limit: 128) == "Outer.Inner")
    }

    /// The server answers 202 but rejects one item of three on its own (`rejected[]`): that item
    /// is moved to the quarantine and counted, and the count goes up with the next batch.
    @Test func anItemTheServerRejectsOnItsOwnIsQuarantinedAndCountedInClientDropped() async throws {
        let server = try ScriptedServer(script: [
            HTTPResponse(status: 202, headers: [("Content-Type", "application/json")],
                         body: Array(#"{"accepted":2,"duplicates":0,"rejected":[{"index":1,"id":null,"error":{"code":"invalid_field","message":"screen must be at most 128 characters"}}]}"#.utf8)),
            DeliveryTests.accepted(0),  // the count, at once, with no report left to carry it
        ])
        let outbox = try Outbox(directory: FileManager.default.temporaryDirectory.appendingPathComponent("wk-\(UUID())"),
                                fallbackRelease: Release(version: "14.2.0", build: "1"))
        for _ in 0..<3 { try outbox.persist(DeliveryTests.report()) }
        let rejected = outbox.pending(.reports, limit: 3, maxBytes: 1 << 20)[1]
        let uploader = Uploader(outbox: outbox, endpoint: server.url, ingestKey: "k", clock: { 0 }, logger: TaggedLogger(tag: "t"))
        #expect(await uploader.drain() == .drained)
        #expect(outbox.count(.reports) == 0)
        #expect(outbox.quarantinedFiles(.reports) == 1)
        let kept = outbox.directory.appendingPathComponent("quarantine/reports/\(rejected.file.lastPathComponent)")
        #expect(try Data(contentsOf: kept) == rejected.json, "the rejected item, moved aside")
        let bodies = try server.requests.map(DeliveryKeepsDataTests.body)
        #expect(bodies.count == 2)
        #expect((bodies.last?["reports"] as? [Any])?.isEmpty == true)
        #expect((bodies.last?["client_dropped"] as? [String: Any])?["quarantined"] as? Int == 1)
        #expect(outbox.unsentDrops().isEmpty, "acknowledged")
    }
}
