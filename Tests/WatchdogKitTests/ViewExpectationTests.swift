import Foundation
import Testing
import WatchdogKit
import WatchdogWire

/// The expectations SwiftUI's `.watchdog(_:screen:expect:)` takes, judged by the layout
/// watchdog on Linux: the modifier only measures the view.
@Suite struct ViewExpectationTests {
    static let window = Frame(x: 0, y: 0, width: 390, height: 844)

    static func watchdog(_ outbox: Outbox, clock: @escaping () -> Double) -> LayoutWatchdog {
        let context = ReportContext(app: "com.example.chat", release: Release(version: "2.0", build: "7"), device: Device(idiom: "phone"), installID: "I-1")
        let watchdog = LayoutWatchdog(context: context, window: window, idiom: .phone, sink: outbox, logger: TaggedLogger(tag: "keyboard"),
                                      clock: clock, crashHandler: { _ in Issue.record("crashed") })
        watchdog.safeAreaBottom = 34
        return watchdog
    }

    static func show(_ watchdog: LayoutWatchdog, height: Double) {
        watchdog.keyboardEvent(KeyboardEvent(kind: .willShow, frameBegin: Frame(x: 0, y: 844, width: 390, height: height),
                                             frameEnd: Frame(x: 0, y: 844 - height, width: 390, height: height), animationDuration: 0.25, animationCurve: 7))
    }

    @Test func theExpectationsPlaceTheViewsBottomEdge() {
        let composer = Frame(x: 0, y: 0, width: 390, height: 52)
        let hidden = ViewExpectation.Context(actual: composer, window: Self.window, keyboardHeight: 0, safeAreaBottom: 34)
        let shown = ViewExpectation.Context(actual: composer, window: Self.window, keyboardHeight: 336, safeAreaBottom: 34)
        #expect(ViewExpectation.keyboardTop.expectedFrame(hidden)?.maxY == Optional(844.0 - 34))
        #expect(ViewExpectation.keyboardTop.expectedFrame(shown)?.maxY == Optional(844.0 - 336))
        #expect(ViewExpectation.safeAreaBottom.expectedFrame(shown)?.maxY == Optional(844.0 - 34))
        #expect(ViewExpectation.custom { $0.keyboardHeight > 0 ? nil : $0.actual }.expectedFrame(shown) == nil)
        #expect(ViewExpectation.keyboardTop.expectedFrame(shown)?.height == 52)
    }

    /// A `.safeAreaInset(edge: .bottom)` composer that stays at the bottom under the keyboard is
    /// a glitch; one that follows the keyboard is not.
    @Test(arguments: [true, false])
    func aComposerExpectedOnTheKeyboardIsReportedOnlyWhenItStaysBehind(follows: Bool) throws {
        let outbox = try Outbox(directory: FileManager.default.temporaryDirectory.appendingPathComponent("wk-\(UUID())"))
        var now = 0.0
        let watchdog = Self.watchdog(outbox) { now }
        var keyboard = 0.0
        watchdog.watch("composer", screen: "Compose", expect: .keyboardTop, actualFrame: {
            Frame(x: 0, y: 844 - (follows && keyboard > 0 ? keyboard : 34) - 52, width: 390, height: 52)
        })
        for _ in 0..<3 { now += 1; watchdog.tick() }
        Self.show(watchdog, height: 336)
        keyboard = 336
        for _ in 0..<3 { now += 1; watchdog.tick() }
        let reports = try outbox.pending(.reports, limit: 10, maxBytes: 1 << 20).map { try JSONDecoder().decode(Report.self, from: $0.json) }
        #expect(reports.count == (follows ? 0 : 1))
        if !follows {
            #expect(reports.first?.view?.name == "composer")
            #expect(reports.first?.screen == "Compose")
            #expect(reports.first?.view?.expected.y == Optional(844.0 - 336 - 52))
        }
    }

    /// A view under `.ignoresSafeArea(.keyboard)` that the keyboard pushes up anyway.
    @Test func aViewExpectedOnTheSafeAreaThatMovesWithTheKeyboardIsReported() throws {
        let outbox = try Outbox(directory: FileManager.default.temporaryDirectory.appendingPathComponent("wk-\(UUID())"))
        var now = 0.0
        let watchdog = Self.watchdog(outbox) { now }
        watchdog.watch("tabBar", expect: .safeAreaBottom, actualFrame: { Frame(x: 0, y: 844 - (watchdog.keyboard.current?.height ?? 34) - 49, width: 390, height: 49) })
        Self.show(watchdog, height: 336)
        for _ in 0..<3 { now += 1; watchdog.tick() }
        #expect(outbox.count(.reports) == 1)
    }
}
