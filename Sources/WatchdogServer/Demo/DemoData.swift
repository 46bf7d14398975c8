import Foundation
import WatchdogStore
import WatchdogWire

/// A realistic demo app for `serve --demo`: two releases of a mail app, the older one with
/// about four times more keyboard glitches per session, written through the store's ingest
/// path (the same roll-ups as real traffic).
public enum DemoData {
    public static let app = "com.example.mail"

    struct ReleasePlan {
        var release: Release
        var sessions: Int
        /// Mean keyboard-glitch reports per session.
        var glitchesPerSession: Double
        var daysAgo: ClosedRange<Double>
    }

    static let plans = [
        ReleasePlan(release: Release(version: "14.1.0", build: "31102", channel: "beta"), sessions: 1_200, glitchesPerSession: 0.40, daysAgo: 8...21),
        ReleasePlan(release: Release(version: "14.2.0", build: "31245", channel: "beta"), sessions: 1_500, glitchesPerSession: 0.10, daysAgo: 0...7),
    ]

    static let screens = ["ComposeViewController", "MessageListViewController", "SearchViewController", "ReplyViewController"]
    static let devices = [
        (Device(model: "iPhone15,2", os: "iOS", osVersion: "18.1", idiom: "phone", locale: "ja_JP"), Frame(x: 0, y: 0, width: 393, height: 852)),
        (Device(model: "iPhone12,1", os: "iOS", osVersion: "17.6", idiom: "phone", locale: "en_US"), Frame(x: 0, y: 0, width: 414, height: 896)),
        (Device(model: "iPad8,1", os: "iPadOS", osVersion: "17.4", idiom: "pad", locale: "en_GB"), Frame(x: 0, y: 0, width: 768, height: 1024)),
    ]

    /// Creates the demo app (if missing) and fills it. Returns `false` if it already existed.
    @discardableResult
    public static func install(into store: any TelemetryStore, nowMilliseconds: Int64) throws -> Bool {
        guard try store.createApp(app, createdAtMilliseconds: nowMilliseconds) else { return false }
        var random = SplitMix64(seed: 20261121)
        let encoder = JSONEncoder()
        var batches: [IngestBatch] = []
        for plan in plans {
            var sessions: [SessionRecord] = []
            var reports: [ReportRecord] = []
            for index in 0..<plan.sessions {
                let installID = "I-\(random.next() % 600)"
                let started = nowMilliseconds - Int64(random.uniform(plan.daysAgo) * 86_400_000)
                let sessionID = uuid(&random)
                let (device, window) = devices[Int(random.next() % UInt64(devices.count))]
                let session = SessionStart(id: sessionID, installId: installID, startedAt: Timestamp.format(milliseconds: started), app: app, release: plan.release, device: device)
                sessions.append(SessionRecord(id: sessionID, app: app, version: plan.release.version, build: plan.release.build, channel: plan.release.channel, installID: installID, startedAt: started, body: String(decoding: try encoder.encode(session), as: UTF8.self)))
                // Poisson-ish: a few sessions have several glitches, most none.
                var glitches = 0
                while random.unit() < plan.glitchesPerSession / (1 + plan.glitchesPerSession) { glitches += 1 }
                for glitch in 0..<glitches {
                    let report = makeReport(&random, plan: plan, sessionID: sessionID, installID: installID, device: device, window: window, at: started + Int64(glitch + 1) * 45_000 + Int64(index % 7) * 1000)
                    let occurred = Timestamp.parseMilliseconds(report.occurredAt) ?? started
                    reports.append(ReportRecord(
                        id: report.id, app: app, version: plan.release.version, build: plan.release.build, channel: plan.release.channel,
                        kind: report.kind, occurredAt: occurred, sessionID: sessionID, installID: installID,
                        isSuspect: report.appState != "active", screen: report.screen,
                        autoFixed: report.action?.autoFixed ?? false, testCrash: report.action?.testCrash ?? false,
                        body: String(decoding: try encoder.encode(report), as: UTF8.self)))
                }
            }
            batches.append(.sessions(sessions, receivedAt: nowMilliseconds))
            batches.append(.reports(reports, receivedAt: nowMilliseconds))
        }
        _ = try store.ingest(batches)
        return true
    }

    private static func makeReport(_ random: inout SplitMix64, plan: ReleasePlan, sessionID: String, installID: String, device: Device, window: Frame, at time: Int64) -> Report {
        let roll = random.unit()
        let kind = roll < 0.6 ? "view_frame_mismatch" : roll < 0.8 ? "input_covered_by_keyboard" : roll < 0.9 ? "keyboard_without_input" : "interaction_lock"
        let screen = screens[Int(random.next() % UInt64(screens.count))]
        // Japanese input adds a candidate bar: 252 pt instead of 216 pt on the same phone.
        let japanese = device.locale == "ja_JP" && random.unit() < 0.7
        let isPad = device.idiom == "pad"
        let undocked = isPad && random.unit() < 0.3
        let keyboardHeight: Double = undocked ? 0 : isPad ? 264 : japanese ? 252 : 216
        let keyboardFrame = undocked ? Frame(x: 0, y: 402, width: window.width, height: 264)
            : Frame(x: 0, y: window.height - keyboardHeight, width: window.width, height: keyboardHeight)
        let expectedY = window.height - keyboardHeight - 44
        let deltas: [Double] = [36, -36, keyboardHeight, 36]
        let delta = deltas[Int(random.next() % 4)]
        let suspect = random.unit() < 0.08
        var report = Report(
            id: uuid(&random), kind: kind, occurredAt: Timestamp.format(milliseconds: time), app: app, release: plan.release,
            device: device, sessionId: sessionID, installId: installID, appState: suspect ? (random.unit() < 0.5 ? "inactive" : "background") : "active",
            screen: screen, window: window,
            keyboard: KeyboardState(visible: kind != "interaction_lock", frame: keyboardFrame, mode: undocked ? "undocked" : "docked", height: keyboardHeight,
                                    animationDuration: 0.25, animationCurve: 7, inputMode: japanese ? "ja-JP" : "en-US", notification: "keyboardWillChangeFrame"),
            action: ClientAction(autoFixed: random.unit() < 0.5, testCrash: random.unit() < 0.02),
            logs: [
                "[keyboard][tracker] keyboardWillChangeFrame: calculated height - \(keyboardHeight)",
                "[keyboard][watchdog] woof: \(screen) expected y \(expectedY), actual y \(expectedY + delta)",
            ]
        )
        switch kind {
        case "interaction_lock":
            report.keyboard = nil
            report.lock = InteractionLock(durationS: 10 + random.unit() * 20, flags: ["is_bar_pop_processing": true, "is_transition_controller_processing": random.unit() < 0.5])
            report.logs = ["[navigation][lock] blockAllInteraction: begin ignoring interaction events", "[navigation][lock] still blocked after 10.0 s"]
        default:
            report.view = ViewFrames(name: kind == "view_frame_mismatch" ? "composeToolbar" : "messageField",
                                     expected: Frame(x: 0, y: expectedY, width: window.width, height: 44),
                                     actual: Frame(x: 0, y: expectedY + delta, width: window.width, height: 44), tolerance: 1)
        }
        return report
    }

    private static func uuid(_ random: inout SplitMix64) -> String {
        let a = random.next(), b = random.next()
        let hex = [UInt8](unsafeUninitializedCapacity: 16) { buffer, count in
            for index in 0..<8 { buffer[index] = UInt8(truncatingIfNeeded: a >> UInt64(index * 8)) }
            for index in 0..<8 { buffer[8 + index] = UInt8(truncatingIfNeeded: b >> UInt64(index * 8)) }
            count = 16
        }.hexString
        let chars = Array(hex)
        return "\(String(chars[0..<8]))-\(String(chars[8..<12]))-4\(String(chars[13..<16]))-a\(String(chars[17..<20]))-\(String(chars[20..<32]))"
    }
}

/// A small deterministic generator, so the demo looks the same on every machine.
struct SplitMix64 {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + unit() * (range.upperBound - range.lowerBound)
    }
}
