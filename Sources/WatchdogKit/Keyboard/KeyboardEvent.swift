import WatchdogWire

/// What a keyboard notification says, in plain values (UIKit's `userInfo` translated by the
/// UIKit glue, or a recorded trace in tests).
public struct KeyboardEvent: Sendable, Equatable {
    /// `UIResponder.keyboard*Notification`, by its short name.
    public enum Kind: String, Sendable, CaseIterable {
        case willShow = "keyboardWillShow"
        case didShow = "keyboardDidShow"
        case willHide = "keyboardWillHide"
        case didHide = "keyboardDidHide"
        case willChangeFrame = "keyboardWillChangeFrame"
        case didChangeFrame = "keyboardDidChangeFrame"

        var isHide: Bool { self == .willHide || self == .didHide }
    }

    public var kind: Kind
    /// `UIKeyboardFrameBeginUserInfoKey`, in screen coordinates.
    public var frameBegin: Frame
    /// `UIKeyboardFrameEndUserInfoKey`, in screen coordinates.
    public var frameEnd: Frame
    /// `UIKeyboardAnimationDurationUserInfoKey`, seconds.
    public var animationDuration: Double
    /// `UIKeyboardAnimationCurveUserInfoKey`.
    public var animationCurve: Int

    public init(kind: Kind, frameBegin: Frame, frameEnd: Frame, animationDuration: Double, animationCurve: Int) {
        self.kind = kind
        self.frameBegin = frameBegin
        self.frameEnd = frameEnd
        self.animationDuration = animationDuration
        self.animationCurve = animationCurve
    }
}

/// How the keyboard sits, as far as the layout is concerned.
public enum KeyboardMode: String, Sendable, Equatable, CaseIterable {
    /// Attached to the bottom of the window: covers its height.
    case docked
    /// An iPad keyboard detached from the bottom (or being dragged): covers nothing at the bottom.
    case undocked
    /// An iPad keyboard split in two halves: covers nothing at the bottom.
    case split
    /// The small floating iPad keyboard: covers nothing at the bottom.
    case floating
    /// A hardware keyboard: only the shortcut bar shows, at the bottom.
    case hardware
    /// No keyboard on screen.
    case hidden
}

/// The device family, as `UIUserInterfaceIdiom`.
public enum DeviceIdiom: String, Sendable, Equatable {
    case phone, pad, mac, tv, vision
}
