import WatchdogWire

/// The keyboard's effect on a window: its mode and the height it covers at the bottom.
public struct KeyboardGeometry: Sendable, Equatable {
    public var mode: KeyboardMode
    /// Points covered at the bottom of the window (what a keyboard-dependent view moves up by).
    public var height: Double
    /// The keyboard's end frame in window coordinates.
    public var frameInWindow: Frame

    public init(mode: KeyboardMode, height: Double, frameInWindow: Frame) {
        self.mode = mode
        self.height = height
        self.frameInWindow = frameInWindow
    }
}

/// Turns keyboard notifications into geometry, remembering what it needs across events (the
/// last docked height, to tell a split iPad keyboard from an undocked one).
///
/// The traps it encodes, each from a real device:
/// - frames are in screen coordinates: convert to the window before comparing;
/// - the height depends on the input mode (216 pt English, 252 pt Japanese on one iPhone):
///   always take it from the frame, never a constant;
/// - an undocked iPad keyboard sends a zero frame while dragged: that is height 0, not
///   "window height − 0";
/// - an undocked, split or floating iPad keyboard ends above the window's bottom and covers 0;
/// - a hardware keyboard leaves only a short shortcut bar at the bottom;
/// - a hide notification means height 0 whatever its frame.
public struct KeyboardTracker: Sendable {
    /// The tallest shortcut bar a hardware keyboard shows (iPadOS's is about 55–70 pt).
    public static let hardwareBarMaximumHeight: Double = 80
    /// Points of slack when deciding that a frame touches the window's bottom.
    public static let edgeSlack: Double = 1

    public let idiom: DeviceIdiom
    /// Height of the last docked keyboard seen (pads: tells split from undocked).
    public private(set) var lastDockedHeight: Double?
    /// The last geometry computed.
    public private(set) var current: KeyboardGeometry?

    public init(idiom: DeviceIdiom) {
        self.idiom = idiom
    }

    /// The geometry after `event`, for a window whose frame (in screen coordinates) is `window`.
    @discardableResult
    public mutating func handle(_ event: KeyboardEvent, window: Frame) -> KeyboardGeometry {
        let end = event.frameEnd
        let inWindow = Frame(x: end.x - window.x, y: end.y - window.y, width: end.width, height: end.height)
        let mode = self.mode(of: inWindow, window: window)
        var height: Double
        switch mode {
        case .docked, .hardware:
            height = min(max(0, window.height - inWindow.minY), window.height)
        case .undocked, .split, .floating, .hidden:
            height = 0
        }
        if event.kind.isHide { height = 0 }
        if mode == .docked, !event.kind.isHide, height > 0 { lastDockedHeight = height }
        let geometry = KeyboardGeometry(mode: mode, height: height, frameInWindow: inWindow)
        current = geometry
        return geometry
    }

    private func mode(of frame: Frame, window: Frame) -> KeyboardMode {
        if frame.width == 0 && frame.height == 0 {
            // The zero frame of a keyboard being dragged (iPad) — or of no keyboard at all.
            return idiom == .pad ? .undocked : .hidden
        }
        if frame.minY >= window.height - Self.edgeSlack || frame.height <= 0 { return .hidden }
        let touchesBottom = frame.maxY >= window.height - Self.edgeSlack
        if touchesBottom {
            if frame.height <= Self.hardwareBarMaximumHeight, idiom == .pad || idiom == .mac { return .hardware }
            return .docked
        }
        guard idiom == .pad else {
            // A phone keyboard is always docked; one ending above the bottom is mid-animation.
            return .docked
        }
        if frame.width < window.width * 0.6 { return .floating }
        if let docked = lastDockedHeight, frame.height < docked - 8 { return .split }
        return .undocked
    }
}
