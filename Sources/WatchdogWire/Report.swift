/// One glitch seen by a watchdog in an app, as posted to `POST /v1/reports` (docs/api.md, "Ingest").
///
/// Unknown JSON fields are ignored so that newer clients can talk to older servers.
public struct Report: Codable, Hashable, Sendable {
    /// Client-generated UUID; the idempotency key.
    public var id: String
    /// `view_frame_mismatch`, `input_covered_by_keyboard`, `keyboard_without_input`,
    /// `interaction_lock` or a custom `x-<name>`.
    public var kind: String
    /// RFC 3339 time the glitch was seen on the device.
    public var occurredAt: String
    /// The app's bundle id.
    public var app: String
    public var release: Release
    public var device: Device?
    public var sessionId: String?
    public var installId: String?
    /// `active`, `inactive` or `background`.
    public var appState: String
    public var screen: String?
    /// The key window's frame in screen coordinates.
    public var window: Frame?
    public var view: ViewFrames?
    public var keyboard: KeyboardState?
    public var lock: InteractionLock?
    public var action: ClientAction?
    public var logs: [String]?
    public var attributes: [String: String]?

    public init(
        id: String, kind: String, occurredAt: String, app: String, release: Release,
        device: Device? = nil, sessionId: String? = nil, installId: String? = nil,
        appState: String = "active", screen: String? = nil, window: Frame? = nil,
        view: ViewFrames? = nil, keyboard: KeyboardState? = nil, lock: InteractionLock? = nil,
        action: ClientAction? = nil, logs: [String]? = nil, attributes: [String: String]? = nil
    ) {
        self.id = id
        self.kind = kind
        self.occurredAt = occurredAt
        self.app = app
        self.release = release
        self.device = device
        self.sessionId = sessionId
        self.installId = installId
        self.appState = appState
        self.screen = screen
        self.window = window
        self.view = view
        self.keyboard = keyboard
        self.lock = lock
        self.action = action
        self.logs = logs
        self.attributes = attributes
    }

    enum CodingKeys: String, CodingKey {
        case id, kind, app, release, device, screen, window, view, keyboard, lock, action, logs, attributes
        case occurredAt = "occurred_at"
        case sessionId = "session_id"
        case installId = "install_id"
        case appState = "app_state"
    }
}

/// Release identity: `version (build)`, e.g. `14.2.0 (31245)`.
public struct Release: Codable, Hashable, Sendable {
    public var version: String
    public var build: String
    /// `beta`, `testflight`, `production`, …
    public var channel: String?

    public init(version: String, build: String, channel: String? = nil) {
        self.version = version
        self.build = build
        self.channel = channel
    }
}

/// The device a report or session came from. Every field is optional.
public struct Device: Codable, Hashable, Sendable {
    public var model: String?
    public var os: String?
    public var osVersion: String?
    /// `phone`, `pad`, `mac`, `tv` or `vision`.
    public var idiom: String?
    public var locale: String?

    public init(model: String? = nil, os: String? = nil, osVersion: String? = nil, idiom: String? = nil, locale: String? = nil) {
        self.model = model
        self.os = os
        self.osVersion = osVersion
        self.idiom = idiom
        self.locale = locale
    }

    enum CodingKeys: String, CodingKey {
        case model, os, idiom, locale
        case osVersion = "os_version"
    }
}

/// Where a keyboard-dependent view should be and where it was.
public struct ViewFrames: Codable, Hashable, Sendable {
    public var name: String?
    public var expected: Frame
    public var actual: Frame
    /// Points of difference that still count as equal.
    public var tolerance: Double?

    public init(name: String? = nil, expected: Frame, actual: Frame, tolerance: Double? = nil) {
        self.name = name
        self.expected = expected
        self.actual = actual
        self.tolerance = tolerance
    }
}

/// The keyboard as the watchdog last saw it.
public struct KeyboardState: Codable, Hashable, Sendable {
    public var visible: Bool?
    public var frame: Frame?
    /// `docked`, `undocked`, `split`, `floating`, `hardware` or `hidden`.
    public var mode: String?
    public var height: Double?
    public var animationDuration: Double?
    public var animationCurve: Int?
    /// The input language, e.g. `ja-JP`.
    public var inputMode: String?
    /// The last keyboard notification seen, e.g. `keyboardWillChangeFrame`.
    public var notification: String?

    public init(
        visible: Bool? = nil, frame: Frame? = nil, mode: String? = nil, height: Double? = nil,
        animationDuration: Double? = nil, animationCurve: Int? = nil, inputMode: String? = nil,
        notification: String? = nil
    ) {
        self.visible = visible
        self.frame = frame
        self.mode = mode
        self.height = height
        self.animationDuration = animationDuration
        self.animationCurve = animationCurve
        self.inputMode = inputMode
        self.notification = notification
    }

    enum CodingKeys: String, CodingKey {
        case visible, frame, mode, height, notification
        case animationDuration = "animation_duration"
        case animationCurve = "animation_curve"
        case inputMode = "input_mode"
    }
}

/// User interaction left blocked, e.g. by a navigation transition that never finished.
public struct InteractionLock: Codable, Hashable, Sendable {
    public var durationS: Double
    /// Named state flags, e.g. `is_bar_pop_processing`.
    public var flags: [String: Bool]?

    public init(durationS: Double, flags: [String: Bool]? = nil) {
        self.durationS = durationS
        self.flags = flags
    }

    enum CodingKeys: String, CodingKey {
        case flags
        case durationS = "duration_s"
    }
}

/// What the client did about the glitch.
public struct ClientAction: Codable, Hashable, Sendable {
    public var autoFixed: Bool?
    public var testCrash: Bool?

    public init(autoFixed: Bool? = nil, testCrash: Bool? = nil) {
        self.autoFixed = autoFixed
        self.testCrash = testCrash
    }

    enum CodingKeys: String, CodingKey {
        case autoFixed = "auto_fixed"
        case testCrash = "test_crash"
    }
}
