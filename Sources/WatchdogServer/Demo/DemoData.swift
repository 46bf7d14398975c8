import Foundation
import WatchdogStore
import WatchdogWire

/// Realistic data written through the store's bulk ingest path (the same roll-ups as real
/// traffic, no HTTP): the two-release demo of `serve --demo`, and data sets of any size for
/// benchmarks (`watchdogd demo --reports 10000000`).
public enum DemoData {
    public static let app = "com.example.mail"

    /// One release to generate.
    public struct ReleasePlan: Sendable {
        public var release: Release
        public var sessions: Int
        /// Mean reports per session.
        public var reportsPerSession: Double
        /// How many days before now the release's traffic spans.
        public var daysAgo: ClosedRange<Double>

        public init(release: Release, sessions: Int, reportsPerSession: Double, daysAgo: ClosedRange<Double>) {
            self.release = release
            self.sessions = sessions
            self.reportsPerSession = reportsPerSession
            self.daysAgo = daysAgo
        }
    }

    /// 14.1.0 with about four times the keyboard glitches per session of 14.2.0.
    static let demoPlans = [
        ReleasePlan(release: Release(version: "14.1.0", build: "31102", channel: "beta"), sessions: 1_200, reportsPerSession: 0.40, daysAgo: 8...21),
        ReleasePlan(release: Release(version: "14.2.0", build: "31245", channel: "beta"), sessions: 1_500, reportsPerSession: 0.10, daysAgo: 0...7),
    ]

    /// Creates the demo app (if missing) and fills it. Returns `false` if it already existed.
    @discardableResult
    public static func install(into store: any TelemetryStore, nowMilliseconds: Int64) throws -> Bool {
        guard try store.createApp(app, createdAtMilliseconds: nowMilliseconds) else { return false }
        _ = try generate(into: store, app: app, plans: demoPlans, nowMilliseconds: nowMilliseconds, seed: 20261121)
        return true
    }

    /// Plans for about `reports` reports over `releases` releases (versions 13.0.0 upwards, each
    /// with its own glitch rate), two reports per session on average.
    public static func plans(reports: Int, releases: Int) -> [ReleasePlan] {
        let count = max(1, releases)
        return (0..<count).map { index in
            let rate = 0.5 + Double((index * 7) % 11) / 4   // 0.5 … 3.0 reports per session
            let share = Double(reports) / Double(count)
            return ReleasePlan(release: Release(version: "13.\(index / 10).\(index % 10)", build: String(30_000 + index * 17), channel: index % 3 == 0 ? "production" : "beta"),
                               sessions: max(1, Int(share / rate)), reportsPerSession: rate,
                               daysAgo: Double(count - index - 1) * 2...Double(count - index) * 2 + 1)
        }
    }

    /// Writes the plans' sessions and reports in transactions of about 20,000 rows; returns the
    /// number of reports written. `progress` gets the running total.
    public static func generate(into store: any TelemetryStore, app: String, plans: [ReleasePlan], nowMilliseconds: Int64, seed: UInt64,
                                progress: (Int) -> Void = { _ in }) throws -> Int {
        var random = SeededGenerator(seed: seed)
        var total = 0
        for plan in plans {
            var sessions: [SessionRecord] = []
            var reports: [ReportRecord] = []
            for index in 0..<plan.sessions {
                let installID = "I-\(random.next() % 5_000)"
                let started = nowMilliseconds - Int64(random.uniform(plan.daysAgo) * 86_400_000)
                let sessionID = uuid(&random)
                let device = devices[Int(random.next() % UInt64(devices.count))]
                sessions.append(SessionRecord(
                    id: sessionID, app: app, version: plan.release.version, build: plan.release.build, channel: plan.release.channel,
                    installID: installID, startedAt: started, idiom: device.idiom,
                    body: #"{"id":"\#(sessionID)","install_id":"\#(installID)","started_at":"\#(Timestamp.format(milliseconds: started))","app":"\#(app)","release":\#(releaseJSON(plan.release)),"device":\#(device.json)}"#))
                // Geometric number of reports per session, mean `reportsPerSession`.
                let p = plan.reportsPerSession / (1 + plan.reportsPerSession)
                var glitch = 0
                while random.unit() < p {
                    glitch += 1
                    let at = min(nowMilliseconds, started + Int64(glitch) * 45_000 + Int64(index % 7) * 1000)
                    reports.append(makeReport(&random, app: app, release: plan.release, sessionID: sessionID, installID: installID, device: device, at: at))
                }
                if sessions.count + reports.count >= 20_000 {
                    total += try flush(&sessions, &reports, store: store, now: nowMilliseconds)
                    progress(total)
                }
            }
            total += try flush(&sessions, &reports, store: store, now: nowMilliseconds)
            progress(total)
        }
        return total
    }

    private static func flush(_ sessions: inout [SessionRecord], _ reports: inout [ReportRecord], store: any TelemetryStore, now: Int64) throws -> Int {
        let written = reports.count
        // Arrival a minute after the latest item: weeks of demo test crashes must not all count
        // against today's budget.
        let arrived = min(now, (reports.map(\.occurredAt) + sessions.map(\.startedAt)).max().map { $0 + 60_000 } ?? now)
        _ = try store.ingest([.sessions(sessions, receivedAt: arrived), .reports(reports, receivedAt: arrived)])
        sessions.removeAll(keepingCapacity: true)
        reports.removeAll(keepingCapacity: true)
        return written
    }

    struct DemoDevice {
        var model: String
        var os: String
        var osVersion: String
        var idiom: String
        var locale: String
        var window: Frame

        var json: String {
            #"{"model":"\#(model)","os":"\#(os)","os_version":"\#(osVersion)","idiom":"\#(idiom)","locale":"\#(locale)"}"#
        }
    }

    static let devices = [
        DemoDevice(model: "iPhone15,2", os: "iOS", osVersion: "18.1", idiom: "phone", locale: "ja_JP", window: Frame(x: 0, y: 0, width: 393, height: 852)),
        DemoDevice(model: "iPhone12,1", os: "iOS", osVersion: "17.6", idiom: "phone", locale: "en_US", window: Frame(x: 0, y: 0, width: 414, height: 896)),
        DemoDevice(model: "iPhone14,5", os: "iOS", osVersion: "18.1", idiom: "phone", locale: "en_GB", window: Frame(x: 0, y: 0, width: 390, height: 844)),
        DemoDevice(model: "iPad8,1", os: "iPadOS", osVersion: "17.4", idiom: "pad", locale: "en_GB", window: Frame(x: 0, y: 0, width: 768, height: 1024)),
    ]
    static let screens = ["ComposeViewController", "MessageListViewController", "SearchViewController", "ReplyViewController", "SettingsViewController"]

    private static func releaseJSON(_ release: Release) -> String {
        #"{"version":"\#(release.version)","build":"\#(release.build)","channel":"\#(release.channel ?? "beta")"}"#
    }

    private static func frameJSON(_ frame: Frame) -> String {
        #"{"x":\#(number(frame.x)),"y":\#(number(frame.y)),"width":\#(number(frame.width)),"height":\#(number(frame.height))}"#
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : String(value)
    }

    private static func makeReport(_ random: inout SeededGenerator, app: String, release: Release, sessionID: String, installID: String, device: DemoDevice, at time: Int64) -> ReportRecord {
        let roll = random.unit()
        let kind = roll < 0.6 ? "view_frame_mismatch" : roll < 0.8 ? "input_covered_by_keyboard" : roll < 0.9 ? "keyboard_without_input" : "interaction_lock"
        let screen = screens[Int(random.next() % UInt64(screens.count))]
        let window = device.window
        // Japanese input adds a candidate bar: 252 pt instead of 216 pt on the same phone.
        let japanese = device.locale == "ja_JP" && random.unit() < 0.7
        let isPad = device.idiom == "pad"
        let undocked = isPad && random.unit() < 0.3
        // A few undocked iPads report the zero-frame bug: a height equal to the window's.
        let zeroFrameBug = undocked && random.unit() < 0.1
        let height: Double = zeroFrameBug ? window.height : undocked ? 0 : isPad ? 264 : japanese ? 252 : 216
        let mode = undocked ? "undocked" : "docked"
        let inputMode = japanese ? "ja-JP" : "en-US"
        let keyboardFrame = undocked ? Frame(x: 0, y: 402, width: window.width, height: 264) : Frame(x: 0, y: window.height - height, width: window.width, height: height)
        let expectedY = window.height - (undocked ? 0 : height) - 44
        let deltas: [Double] = [36, -36, 252 - 216, 44]
        let delta = deltas[Int(random.next() % 4)]
        let suspect = random.unit() < 0.08
        let state = suspect ? (random.unit() < 0.5 ? "inactive" : "background") : "active"
        let autoFixed = random.unit() < 0.5
        let testCrash = random.unit() < 0.02
        let id = uuid(&random)
        let viewName = kind == "view_frame_mismatch" ? "composeToolbar" : kind == "interaction_lock" ? nil : "messageField"
        var body = #"{"id":"\#(id)","kind":"\#(kind)","occurred_at":"\#(Timestamp.format(milliseconds: time))","app":"\#(app)","release":\#(releaseJSON(release)),"device":\#(device.json),"session_id":"\#(sessionID)","install_id":"\#(installID)","app_state":"\#(state)","screen":"\#(screen)","window":\#(frameJSON(window)),"#
        if kind == "interaction_lock" {
            let duration = 10 + random.unit() * 20
            body += #""lock":{"duration_s":\#(String(format: "%.1f", duration)),"flags":{"is_bar_pop_processing":true,"is_transition_controller_processing":\#(random.unit() < 0.5)}},"logs":["[navigation][lock] blockAllInteraction: begin ignoring interaction events","[navigation][lock] still blocked after 10.0 s"],"#
        } else {
            body += #""view":{"name":"\#(viewName ?? "")","expected":\#(frameJSON(Frame(x: 0, y: expectedY, width: window.width, height: 44))),"actual":\#(frameJSON(Frame(x: 0, y: expectedY + delta, width: window.width, height: 44))),"tolerance":1},"#
            body += #""keyboard":{"visible":true,"frame":\#(frameJSON(keyboardFrame)),"mode":"\#(mode)","height":\#(number(height)),"animation_duration":0.25,"animation_curve":7,"input_mode":"\#(inputMode)","notification":"keyboardWillChangeFrame"},"#
            body += #""logs":["[keyboard][tracker] keyboardWillChangeFrame: calculated height - \#(number(height))","[keyboard][watchdog] woof: \#(screen) expected y \#(number(expectedY)), actual y \#(number(expectedY + delta))"],"#
        }
        body += #""action":{"auto_fixed":\#(autoFixed),"test_crash":\#(testCrash)}}"#
        let hasKeyboard = kind != "interaction_lock"
        return ReportRecord(
            id: id, app: app, version: release.version, build: release.build, channel: release.channel, kind: kind, occurredAt: time,
            sessionID: sessionID, installID: installID, isSuspect: suspect, screen: screen, autoFixed: autoFixed, testCrash: testCrash,
            fingerprint: Fingerprint.of(kind: kind, screen: screen, viewName: viewName, keyboardMode: hasKeyboard ? mode : nil),
            viewName: viewName, keyboardMode: hasKeyboard ? mode : nil, keyboardHeight: hasKeyboard ? height : nil,
            inputMode: hasKeyboard ? inputMode : nil, deviceModel: device.model, idiom: device.idiom, windowHeight: window.height, body: body)
    }

    private static func uuid(_ random: inout SeededGenerator) -> String {
        let digits = Array("0123456789abcdef".utf8)
        let a = random.next(), b = random.next()
        var text = [UInt8](repeating: UInt8(ascii: "-"), count: 36)
        var position = 0
        for index in 0..<32 {
            if position == 8 || position == 13 || position == 18 || position == 23 { position += 1 }
            let word = index < 16 ? a : b
            text[position] = digits[Int((word >> UInt64((index % 16) * 4)) & 0xF)]
            position += 1
        }
        text[14] = UInt8(ascii: "4")  // version 4
        text[19] = UInt8(ascii: "a")  // RFC 4122 variant
        return String(decoding: text, as: UTF8.self)
    }
}
