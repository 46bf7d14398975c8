import WatchdogWire

/// The keyboard's effect on a window: its mode and the height it covers at the bottom.
public struct KeyboardGeometry: Sendable, Equatable {
    /// How the keyboard sits: docked, undocked, split, floating, hardware or hidden.
    public var mode: KeyboardMode
    /// Points covered at the bottom of the window (what a keyboard-dependent view moves up by).
    public var height: Double
    /// The keyboard's end frame in window coordinates.
    public var frameInWindow: Frame

    /// Geometry as the tracker derives it (or a test states it).
    public init(mode: KeyboardMode, height: Double, frameInWindow: Frame) {
        self.mode = mode
        self.height = height
        self.frameInWindow = frameInWindow
    }
}

/// Turns keyboard notifications into geometry, remembering what it needs across events (the
/// last docked height, to tell a split iPad keyboard from an undocked one; the last local
/// event, to re-evaluate when the window changes without a keyboard notification).
///
/// The traps it encodes, each from a real device:
/// - frames are in screen coordinates: convert to the window before comparing;
/// - the height depends on the input mode (216 pt English, 252 pt Japanese on one iPhone):
///   always take it from the frame, never a constant;
/// - an undocked iPad keyboard sends a zero frame while dragged: that is height 0, not
///   "window height − 0";
/// - an undocked, split or floating iPad keyboard ends above the window's bottom and covers 0;
/// - a floating keyboard is small *for the screen*: a 320 pt one over a 320 pt Slide Over
///   window is still floating;
/// - a hardware keyboard is a full-height frame mostly below the screen's bottom edge: iPadOS
///   shows its shortcut bar (313 pt tall, 55 pt visible), plus the field's
///   `inputAccessoryView` when there is one (~99 pt visible); an iPhone with a Bluetooth
///   keyboard shows only the accessory. Whatever shows above the edge, the frame being mostly
///   below it decides `hardware`, on every idiom; `height` is what shows (accessory included).
///   A bar shorter than any software keyboard reported fully on screen at the bottom edge (the
///   bare shortcut bar, 55 pt) is `hardware` too;
/// - a hide notification means height 0 whatever its frame;
/// - another app's keyboard (`isLocal == false`: Split View, Slide Over, app switching) says
///   nothing about this app's layout and is ignored;
/// - the window can move or resize without any keyboard notification (Stage Manager, Split
///   View ↔ Slide Over, rotation): `windowChanged` re-evaluates the last event.
public struct KeyboardTracker: Sendable {
    /// A keyboard frame with more than this share of its height below the screen's bottom edge
    /// is a hardware keyboard's (only its shortcut bar and/or the input accessory show).
    public static let hardwareHiddenShare: Double = 0.5
    /// A keyboard frame at the bottom edge shorter than this is a hardware keyboard's bar (the
    /// shortcut bar, 55 pt, with an accessory 99 pt), not a software keyboard (the shortest, an
    /// iPhone's in landscape, is well over 100 pt). Its height counts all the same: only the mode differs.
    public static let hardwareBarMaximumHeight: Double = 110

    /// Points of slack when deciding that a frame touches the window's bottom.
    public static let edgeSlack: Double = 1
    /// A keyboard narrower than this share of the screen is the floating one.
    public static let floatingWidthShare: Double = 0.6

    /// The device family: what counts as a floating keyboard depends on it.
    public let idiom: DeviceIdiom
    /// Height of the last docked keyboard seen (pads: tells split from undocked).
    public private(set) var lastDockedHeight: Double?
    /// The last geometry computed.
    public private(set) var current: KeyboardGeometry?
    /// The last event of this app's keyboard (not another app's).
    public private(set) var lastLocalEvent: KeyboardEvent?
    /// The keyboard's screen, from the last event that said it.
    public private(set) var screen: Frame?

    /// A tracker that has heard no keyboard notification yet (no keyboard).
    public init(idiom: DeviceIdiom) {
        self.idiom = idiom
    }

    /// The geometry after `event`, for a window whose frame (in screen coordinates) is `window`.
    /// Another app's keyboard (`isLocal == false`) leaves it unchanged.
    @discardableResult
    public mutating func handle(_ event: KeyboardEvent, window: Frame) -> KeyboardGeometry {
        guard event.isLocal != false else {
            return current ?? KeyboardGeometry(mode: .hidden, height: 0, frameInWindow: Frame(x: 0, y: window.height, width: window.width, height: 0))
        }
        if let screen = event.screen { self.screen = screen }
        lastLocalEvent = event
        return evaluate(event, window: window)
    }

    /// No keyboard for this window (another window of the app, or another screen, has it): the
    /// geometry is hidden and a later window change re-evaluates nothing.
    public mutating func reset(window: Frame) {
        lastLocalEvent = nil
        current = KeyboardGeometry(mode: .hidden, height: 0, frameInWindow: Frame(x: 0, y: window.height, width: window.width, height: 0))
    }

    /// The geometry after the window moved or resized without a keyboard notification: the
    /// last local event's frame, seen from the new window. `nil` before any event.
    @discardableResult
    public mutating func windowChanged(_ window: Frame) -> KeyboardGeometry? {
        guard let event = lastLocalEvent else { return nil }
        return evaluate(event, window: window)
    }

    private mutating func evaluate(_ event: KeyboardEvent, window: Frame) -> KeyboardGeometry {
        let end = event.frameEnd
        let inWindow = Frame(x: end.x - window.x, y: end.y - window.y, width: end.width, height: end.height)
        let mode = self.mode(of: end, inWindow: inWindow, window: window)
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

    /// Whether most of a keyboard frame lies below the screen's bottom edge: a hardware
    /// keyboard, whatever shows above the edge (shortcut bar, accessory view, both).
    static func isMostlyBelow(_ frame: Frame, screen: Frame) -> Bool {
        frame.height > 0 && frame.maxY - screen.maxY > frame.height * hardwareHiddenShare
    }

    /// Whether a keyboard frame is a bar shorter than any software keyboard: iPadOS's bare
    /// shortcut bar (55 pt) or an input accessory view alone, reported fully on screen at its
    /// bottom edge when a hardware keyboard is attached.
    static func isShortBar(_ frame: Frame) -> Bool {
        frame.height > 0 && frame.height < hardwareBarMaximumHeight
    }

    /// - Parameters:
    ///   - frame: the keyboard's frame in screen coordinates.
    ///   - inWindow: the same frame in window coordinates.
    private func mode(of frame: Frame, inWindow: Frame, window: Frame) -> KeyboardMode {
        if inWindow.width == 0 && inWindow.height == 0 {
            // The zero frame of a keyboard being dragged (iPad) — or of no keyboard at all.
            return idiom == .pad ? .undocked : .hidden
        }
        if inWindow.minY >= window.height - Self.edgeSlack || inWindow.height <= 0 { return .hidden }
        let touchesBottom = inWindow.maxY >= window.height - Self.edgeSlack
        // Judged against the keyboard's screen: a hardware keyboard's frame is mostly below it.
        let screen = self.screen ?? window
        if touchesBottom {
            return Self.isMostlyBelow(frame, screen: screen) || Self.isShortBar(frame) ? .hardware : .docked
        }
        guard idiom == .pad else {
            // A phone keyboard is always docked; one ending above the bottom is mid-animation.
            return .docked
        }
        if inWindow.width < screen.width * Self.floatingWidthShare { return .floating }
        if let docked = lastDockedHeight, inWindow.height < docked - 8 { return .split }
        return .undocked
    }
}
