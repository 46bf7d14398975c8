import Foundation
import Testing
import TestSupport
import WatchdogKit
import WatchdogWire

/// Replays the layout traces of `Tests/Fixtures/keyboard-traces` (the files with `windows`):
/// composers above a tab bar, a toolbar, in a form sheet and a split column, two windows of
/// the app side by side, a window on an external display — through one real agent with one
/// scene per window, as the UIKit drivers feed it.
@Suite struct LayoutTraceTests {
    struct WindowSpec {
        var id: String
        var screen: String
        var frame: Frame
        var composerHeight: Double
        var container: LayoutContainer
        var windowSafeAreaInset: Double
    }

    struct WindowStep {
        var composerBottom: Double
        var guideTop: Double
        var height: Double
        var owner: KeyboardOwner
        var mode: String?
        var container: LayoutContainer?
    }

    struct Step {
        var event: KeyboardEvent?
        var firstResponder: String?
        var key: String
        var windows: [String: WindowStep]
    }

    struct Trace {
        var name: String
        var idiom: DeviceIdiom
        var screens: [String: Frame]
        var windows: [WindowSpec]
        var steps: [Step]
        var stuckComposerReports: Int
    }

    /// How the app and the watchdog behave in a replay.
    enum Variant: Equatable {
        /// A correct app; the hosting views' `keyboardLayoutGuide` known (iOS 15+) or not.
        case correct(guide: Bool)
        /// A correct app whose composers are pinned to `keyboardLayoutGuide.topAnchor` (iOS 15+).
        case pinnedToGuide
        /// A composer that ignores the keyboard: it stays on its safe area's bottom.
        case stuckComposer
        /// A correct app judged the way WatchdogKit did before: against the window's safe
        /// area, every keyboard notification taken as the window's own.
        case windowModel
    }

    static func container(_ value: Any?) -> LayoutContainer? {
        guard let dictionary = value as? [String: Any] else { return nil }
        return LayoutContainer(frame: KeyboardTraceTests.frame(dictionary["frame"]), safeAreaBottom: dictionary["safe_area_bottom"] as? Double ?? 0)
    }

    static func traces() throws -> [Trace] {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/keyboard-traces")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }.sorted()
        return try names.compactMap { name -> Trace? in
            let json = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(name))) as? [String: Any] ?? [:]
            guard let windows = json["windows"] as? [[String: Any]] else { return nil }
            let screens = (json["screens"] as? [String: Any] ?? [:]).mapValues(KeyboardTraceTests.frame)
            let device = json["device"] as? [String: String] ?? [:]
            let steps = (json["steps"] as? [[String: Any]] ?? []).map { step in
                Step(event: (step["notification"] as? String).map { notification in
                         let screen = step["keyboard_screen"] as? String ?? ""
                         return KeyboardEvent(kind: KeyboardEvent.Kind(rawValue: notification)!,
                                              frameBegin: KeyboardTraceTests.frame(step["frame_begin"]), frameEnd: KeyboardTraceTests.frame(step["frame_end"]),
                                              animationDuration: step["duration"] as? Double ?? 0, animationCurve: step["curve"] as? Int ?? 0,
                                              isLocal: step["is_local"] as? Bool, screen: screens[screen], screenID: screenID(screen))
                     },
                     firstResponder: step["first_responder"] as? String, key: step["key"] as? String ?? "",
                     windows: (step["windows"] as? [String: [String: Any]] ?? [:]).mapValues { window in
                         WindowStep(composerBottom: window["composer_bottom"] as? Double ?? 0, guideTop: window["guide_top"] as? Double ?? 0,
                                    height: window["height"] as? Double ?? -1, owner: KeyboardOwner(rawValue: window["owner"] as? String ?? "") ?? .thisWindow,
                                    mode: window["mode"] as? String, container: container(window["container"]))
                     })
            }
            return Trace(name: name, idiom: DeviceIdiom(rawValue: device["idiom"] ?? "phone") ?? .phone, screens: screens,
                         windows: windows.map { window in
                             WindowSpec(id: window["id"] as? String ?? "", screen: window["screen"] as? String ?? "", frame: KeyboardTraceTests.frame(window["frame"]),
                                        composerHeight: window["composer_height"] as? Double ?? 0, container: container(window["container"])!,
                                        windowSafeAreaInset: window["window_safe_area_inset"] as? Double ?? 0)
                         },
                         steps: steps, stuckComposerReports: json["stuck_composer_reports"] as? Int ?? -1)
        }
    }

    /// A stable identity per screen name, as the glue's `ObjectIdentifier` of a `UIScreen` is.
    static func screenID(_ name: String) -> Int { name == "device" ? 1 : 2 }

    struct Replay {
        var reports: [Report]
        var crashes = 0
        /// What went other than the trace says, per step and window.
        var mismatches: [String] = []
    }

    /// Plays `trace` through one agent, a scene per window, five one-second ticks after each step.
    @MainActor static func replay(_ trace: Trace, _ variant: Variant) throws -> Replay {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("layout-\(UUID())")
        defer { try? FileManager.default.removeItem(at: storage) }
        var settings = WatchdogSettings(endpoint: URL(string: "http://127.0.0.1:1")!, ingestKey: "wdi_test", app: "com.example.chat",
                                        release: Release(version: "2.0", build: "7"), device: Device(idiom: trace.idiom.rawValue), idiom: trace.idiom,
                                        storageDirectory: storage)
        settings.host = HostApp(distribution: .testFlight)
        let clock = ManualClock(100)
        var crashes = 0
        let agent = WatchdogAgent(settings: settings, window: trace.windows[0].frame, clock: { clock.now }, transport: OfflineTransport(),
                                  crashHandler: { _ in crashes += 1 })
        var responder: String?
        var key = trace.steps.first?.key ?? ""
        var bottoms: [String: Double] = [:]
        var guides: [String: Double] = [:]
        var containers: [String: LayoutContainer] = [:]
        var scenes: [(WindowSpec, WatchdogScene)] = []
        for spec in trace.windows {
            let scene = agent.attachScene(window: spec.frame)
            scene.isKey = { key == spec.id }
            scene.screenID = { screenID(spec.screen) }
            containers[spec.id] = spec.container
            bottoms[spec.id] = spec.container.safeAreaBottom
            scene.layout.safeAreaBottom = spec.windowSafeAreaInset
            scene.layout.firstResponder = {
                guard responder == spec.id, let bottom = bottoms[spec.id] else { return .none }
                return .input(Frame(x: 8, y: bottom - 44, width: spec.frame.width - 16, height: 36))
            }
            scene.layout.watch("composer", screen: "Chat", expect: .keyboardTop, actualFrame: {
                bottoms[spec.id].map { Frame(x: 0, y: $0 - spec.composerHeight, width: spec.frame.width, height: spec.composerHeight) }
            }, container: variant == .windowModel ? nil : {
                guard var container = containers[spec.id] else { return nil }
                if variant == .correct(guide: true) || variant == .pinnedToGuide { container.keyboardGuideTop = guides[spec.id] }
                return container
            })
            agent.setAppState(.active, for: scene)
            scenes.append((spec, scene))
        }
        agent.startSession()
        var mismatches: [String] = []
        for (index, step) in trace.steps.enumerated() {
            responder = step.firstResponder
            key = step.key
            for (spec, _) in scenes {
                if let changed = step.windows[spec.id]?.container { containers[spec.id] = changed }
            }
            if let event = step.event {
                for (_, scene) in scenes {
                    if variant == .windowModel { scene.layout.keyboardEvent(event) } else { agent.keyboardEvent(event, in: scene) }
                }
            }
            for (spec, scene) in scenes {
                guard let expected = step.windows[spec.id] else { continue }
                switch variant {
                case .stuckComposer: bottoms[spec.id] = containers[spec.id]?.safeAreaBottom
                case .pinnedToGuide: bottoms[spec.id] = expected.guideTop
                case .correct, .windowModel: bottoms[spec.id] = expected.composerBottom
                }
                guides[spec.id] = expected.guideTop
                guard variant != .windowModel else { continue }
                let place = "\(trace.name) step \(index) window \(spec.id)"
                if scene.layout.keyboardOwner != expected.owner { mismatches.append("\(place): owner \(scene.layout.keyboardOwner), expected \(expected.owner)") }
                if scene.layout.keyboardCoverage != expected.height { mismatches.append("\(place): height \(scene.layout.keyboardCoverage), expected \(expected.height)") }
                if let mode = expected.mode, scene.layout.keyboard.current?.mode.rawValue != mode {
                    mismatches.append("\(place): mode \(String(describing: scene.layout.keyboard.current?.mode)), expected \(mode)")
                }
            }
            for _ in 0..<5 {
                clock.advance(1)
                for (_, scene) in scenes { agent.tick(scene) { .clear } }
            }
        }
        agent.flushWrites()
        let reports = try agent.outbox.pending(.reports, limit: 500, maxBytes: 1 << 30).map { try JSONDecoder().decode(Report.self, from: $0.json) }
        return Replay(reports: reports, crashes: crashes, mismatches: mismatches)
    }

    @MainActor @Test func everyStepOfEveryLayoutTraceGivesEachWindowItsOwnKeyboard() throws {
        let traces = try Self.traces()
        #expect(traces.map(\.name) == [
            "ipad-composer-above-toolbar-and-shortcut-bar.json", "ipad-external-display-window.json", "ipad-form-sheet-composer.json",
            "ipad-split-column-composer.json", "ipad-two-windows-side-by-side.json", "iphone-composer-above-tab-bar.json",
        ])
        for trace in traces {
            let replay = try Self.replay(trace, .correct(guide: false))
            #expect(replay.mismatches.isEmpty, "\(replay.mismatches.joined(separator: "\n"))")
        }
    }

    @Test(arguments: try traces().map(\.name), [false, true])
    @MainActor func aCorrectAppGetsNoReportFromAnyLayoutTrace(_ name: String, guide: Bool) throws {
        let trace = try #require(try Self.traces().first { $0.name == name })
        let replay = try Self.replay(trace, .correct(guide: guide))
        #expect(replay.reports.isEmpty, "\(name): \(replay.reports.map { "\($0.kind) \($0.view?.name ?? "") expected \($0.view?.expected.maxY ?? -1) actual \($0.view?.actual.maxY ?? -1)" })")
    }

    /// Where the guide and the keyboard's frame differ (a hardware keyboard's bar below a
    /// toolbar), a composer pinned to the hosting view's `keyboardLayoutGuide` is where UIKit
    /// puts it: not a glitch either.
    @Test(arguments: try traces().map(\.name))
    @MainActor func aComposerPinnedToTheKeyboardLayoutGuideGetsNoReport(_ name: String) throws {
        let trace = try #require(try Self.traces().first { $0.name == name })
        let replay = try Self.replay(trace, .pinnedToGuide)
        #expect(replay.reports.isEmpty, "\(name): \(replay.reports.map { "\($0.kind) expected \($0.view?.expected.maxY ?? -1) actual \($0.view?.actual.maxY ?? -1)" })")
    }

    /// The real glitch of each trace — a composer left on its safe area's bottom under the
    /// keyboard — is still reported, once per episode, in the window that has the keyboard.
    @Test(arguments: try traces().map(\.name))
    @MainActor func aComposerThatIgnoresTheKeyboardIsReportedInEachLayoutTrace(_ name: String) throws {
        let trace = try #require(try Self.traces().first { $0.name == name })
        let replay = try Self.replay(trace, .stuckComposer)
        let mismatches = replay.reports.filter { $0.kind == "view_frame_mismatch" }
        #expect(mismatches.count == trace.stuckComposerReports, "\(name)")
        #expect(trace.stuckComposerReports > 0)
    }

    /// Each trace is one the earlier rules got wrong: judged against the window's safe area,
    /// with every notification taken as the window's own, the same correct app is reported.
    @Test(arguments: try traces().map(\.name))
    @MainActor func theWindowModelReportsACorrectAppInEachLayoutTrace(_ name: String) throws {
        let trace = try #require(try Self.traces().first { $0.name == name })
        #expect(try Self.replay(trace, .windowModel).reports.count > 0, "\(name)")
    }
}

/// A transport with no network: every request fails at once (replays never upload).
struct OfflineTransport: HTTPTransport {
    struct Offline: Error {}

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        throw Offline()
    }
}
