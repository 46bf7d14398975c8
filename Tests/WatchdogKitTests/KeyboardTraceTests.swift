import Foundation
import Testing
import WatchdogKit
import WatchdogWire

/// Replays the recorded keyboard-notification traces in `Tests/Fixtures/keyboard-traces`.
@Suite struct KeyboardTraceTests {
    struct Step {
        /// A keyboard notification, or `nil` for a window change without one.
        var event: KeyboardEvent?
        /// The new window frame of a window change.
        var window: Frame?
        var appState: String
        var height: Double
        var mode: String?
        var shouldCheck: Bool
    }

    struct Trace {
        var name: String
        var idiom: DeviceIdiom
        var window: Frame
        var events: [Step]
    }

    static func frame(_ value: Any?) -> Frame {
        let dictionary = value as? [String: Double] ?? [:]
        return Frame(x: dictionary["x"] ?? 0, y: dictionary["y"] ?? 0, width: dictionary["width"] ?? 0, height: dictionary["height"] ?? 0)
    }

    static func traces() throws -> [Trace] {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/keyboard-traces")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }.sorted()
        return try names.compactMap { name in
            let json = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(name))) as? [String: Any] ?? [:]
            // One window's traces; those with `windows` are `LayoutTraceTests`'.
            guard json["window"] != nil else { return nil }
            let device = json["device"] as? [String: String] ?? [:]
            let events = (json["events"] as? [[String: Any]] ?? []).map { event in
                Step(event: (event["notification"] as? String).map { notification in
                         KeyboardEvent(kind: KeyboardEvent.Kind(rawValue: notification)!,
                                       frameBegin: frame(event["frame_begin"]), frameEnd: frame(event["frame_end"]),
                                       animationDuration: event["duration"] as? Double ?? 0, animationCurve: event["curve"] as? Int ?? 0,
                                       isLocal: event["is_local"] as? Bool, screen: event["screen"].map(frame))
                     },
                     window: event["window"].map(frame),
                     appState: event["app_state"] as? String ?? "active",
                     height: event["expected_height"] as? Double ?? -1,
                     mode: event["expected_mode"] as? String,
                     shouldCheck: event["watchdog_should_check"] as? Bool ?? true)
            }
            return Trace(name: name, idiom: DeviceIdiom(rawValue: device["idiom"] ?? "phone") ?? .phone, window: frame(json["window"]), events: events)
        }
    }

    @Test func everyEventOfEveryTraceGivesTheExpectedHeightAndMode() throws {
        let traces = try Self.traces()
        #expect(traces.count == 10)
        var checked = 0
        for trace in traces {
            var tracker = KeyboardTracker(idiom: trace.idiom)
            var window = trace.window
            for (index, step) in trace.events.enumerated() {
                let geometry: KeyboardGeometry?
                if let event = step.event {
                    geometry = tracker.handle(event, window: window)
                } else {
                    window = try #require(step.window, "\(trace.name) event \(index): neither notification nor window")
                    geometry = tracker.windowChanged(window)
                }
                #expect(geometry?.height == step.height, "\(trace.name) event \(index): height \(String(describing: geometry?.height)), expected \(step.height)")
                if let mode = step.mode {
                    #expect(geometry?.mode.rawValue == mode, "\(trace.name) event \(index): mode \(String(describing: geometry?.mode)), expected \(mode)")
                }
                checked += 1
            }
        }
        #expect(checked == 50)
    }

    /// Every trace through the layout watchdog, with a toolbar where a correct app puts it (at
    /// the expected height whenever the app is active): no glitch, ever.
    @Test(arguments: try traces().map(\.name))
    func aCorrectAppGetsNoGlitchReportFromAnyTrace(_ name: String) throws {
        let trace = try #require(try Self.traces().first { $0.name == name })
        let outbox = try Outbox(directory: FileManager.default.temporaryDirectory.appendingPathComponent("wk-\(UUID())"))
        var now = 0.0
        let context = ReportContext(app: "com.example.mail", release: Release(version: "14.2.0", build: "1"), device: Device(idiom: trace.idiom.rawValue), installID: "I-1")
        let watchdog = LayoutWatchdog(context: context, window: trace.window, idiom: trace.idiom, sink: outbox, logger: TaggedLogger(tag: "keyboard"),
                                      clock: { now }, crashHandler: { _ in Issue.record("crashed") })
        var placedFor = 0.0
        watchdog.watch(WatchedView(name: "toolbar",
                                   expectedFrame: { Frame(x: 0, y: watchdog.window.height - (watchdog.keyboard.current?.height ?? 0) - 44, width: 320, height: 44) },
                                   actualFrame: { Frame(x: 0, y: watchdog.window.height - placedFor - 44, width: 320, height: 44) }))
        for step in trace.events {
            watchdog.appState = AppState(rawValue: step.appState)!
            if let event = step.event {
                watchdog.keyboardEvent(event)
            } else if let window = step.window {
                watchdog.windowChanged(window)
            }
            if step.appState == "active" { placedFor = step.height }
            for _ in 0..<5 {
                now += 1
                watchdog.tick()
            }
        }
        #expect(outbox.count(.reports) == 0, "\(name): \(outbox.count(.reports)) false glitches")
        #expect(watchdog.keyboard.current?.height == trace.events.last?.height, "\(name): ends on the app's own keyboard")
    }

    @Test func theAppSwitchTraceGivesNoGlitchWhileInactiveOrInBackground() throws {
        let trace = try #require(try Self.traces().first { $0.name.hasPrefix("app-switch") })
        let outbox = try Outbox(directory: FileManager.default.temporaryDirectory.appendingPathComponent("wk-\(UUID())"))
        var now = 0.0
        let context = ReportContext(app: "com.example.mail", release: Release(version: "14.2.0", build: "1"), device: Device(idiom: "phone"), installID: "I-1")
        let watchdog = LayoutWatchdog(context: context, window: trace.window, idiom: trace.idiom, sink: outbox, logger: TaggedLogger(tag: "keyboard"),
                                      clock: { now }, crashHandler: { _ in Issue.record("crashed") })
        // The view follows the keyboard of *this* app: it ignores notifications while inactive.
        var followedHeight = 0.0
        watchdog.watch(WatchedView(name: "toolbar", expectedFrame: { Frame(x: 0, y: trace.window.height - watchdog.keyboard.current!.height - 44, width: 390, height: 44) },
                                   actualFrame: { Frame(x: 0, y: trace.window.height - followedHeight - 44, width: 390, height: 44) }))
        for step in trace.events {
            watchdog.appState = AppState(rawValue: step.appState)!
            watchdog.keyboardEvent(try #require(step.event))
            if step.appState == "active" { followedHeight = watchdog.keyboard.current!.height }
            for _ in 0..<5 {
                now += 1
                watchdog.tick()
            }
        }
        #expect(outbox.count(.reports) == 0)
    }

    /// Back in front without a new keyboard notification: the app's own keyboard counts, not
    /// the other app's it heard about while inactive.
    @Test func returningToActiveWithoutANotificationKeepsTheAppsOwnKeyboard() throws {
        let outbox = try Outbox(directory: FileManager.default.temporaryDirectory.appendingPathComponent("wk-\(UUID())"))
        var now = 0.0
        let window = Frame(x: 0, y: 0, width: 390, height: 844)
        let context = ReportContext(app: "com.example.mail", release: Release(version: "14.2.0", build: "1"), device: Device(idiom: "phone"), installID: "I-1")
        let watchdog = LayoutWatchdog(context: context, window: window, idiom: .phone, sink: outbox, logger: TaggedLogger(tag: "keyboard"),
                                      clock: { now }, crashHandler: { _ in Issue.record("crashed") })
        // The view sits where this app's 336 pt keyboard puts it.
        watchdog.watch(WatchedView(name: "toolbar", expectedFrame: { Frame(x: 0, y: 844 - (watchdog.keyboard.current?.height ?? 0) - 44, width: 390, height: 44) },
                                   actualFrame: { Frame(x: 0, y: 844 - 336 - 44, width: 390, height: 44) }))
        func show(_ height: Double) -> KeyboardEvent {
            KeyboardEvent(kind: .willShow, frameBegin: Frame(x: 0, y: 844, width: 390, height: height),
                          frameEnd: Frame(x: 0, y: 844 - height, width: 390, height: height), animationDuration: 0.25, animationCurve: 7)
        }
        watchdog.keyboardEvent(show(336))
        watchdog.appState = .inactive
        watchdog.appState = .background
        watchdog.keyboardEvent(show(291))  // another app's keyboard
        #expect(watchdog.keyboard.current?.height == 291)
        watchdog.appState = .active
        #expect(watchdog.keyboard.current?.height == 336)
        for _ in 0..<4 {
            now += 1
            watchdog.tick()
        }
        #expect(outbox.count(.reports) == 0)
    }
}
