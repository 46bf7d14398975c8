import WatchdogWire

/// What a keyboard notification says, in plain values (UIKit's `userInfo` translated by the
/// UIKit glue, or a recorded trace in tests).
public struct KeyboardEvent: Sendable, Equatable {
    /// `UIResponder.keyboard*Notification`, by its short name.
    public enum Kind: String, Sendable, CaseIterable {
        /// `keyboardWillShowNotification`.
        case willShow = "keyboardWillShow"
        /// `keyboardDidShowNotification`.
        case didShow = "keyboardDidShow"
        /// `keyboardWillHideNotification`.
        case willHide = "keyboardWillHide"
        /// `keyboardDidHideNotification`.
        case didHide = "keyboardDidHide"
        /// `keyboardWillChangeFrameNotification`.
        case willChangeFrame = "keyboardWillChangeFrame"
        /// `keyboardDidChangeFrameNotification` (also sent while an undocked iPad keyboard is dragged).
        case didChangeFrame = "keyboardDidChangeFrame"

        /// `keyboardWillHide` or `keyboardDidHide`.
        public var isHide: Bool { self == .willHide || self == .didHide }
    }

    /// Which notification this is.
    public var kind: Kind
    /// `UIKeyboardFrameBeginUserInfoKey`, in screen coordinates.
    public var frameBegin: Frame
    /// `UIKeyboardFrameEndUserInfoKey`, in screen coordinates.
    public var frameEnd: Frame
    /// `UIKeyboardAnimationDurationUserInfoKey`, seconds.
    public var animationDuration: Double
    /// `UIKeyboardAnimationCurveUserInfoKey`.
    public var animationCurve: Int
    /// `UIKeyboardIsLocalUserInfoKey`: whether the keyboard belongs to this app. `false` for
    /// another app's keyboard (iPad Split View / Slide Over, or while this app is inactive);
    /// `nil` when unknown (before iOS 9, or a trace that did not record it).
    public var isLocal: Bool?
    /// The bounds of the screen the keyboard is on (the notification's `object` on iOS 16.1+,
    /// else the window's screen); `nil` when unknown. Floating and hardware keyboards are judged
    /// against it, not against the window.
    public var screen: Frame?
    /// Which screen the keyboard is on (the glue's identity of the notification's `UIScreen`,
    /// iOS 16.1+), to compare with each window's screen; `nil` when unknown.
    public var screenID: Int?

    /// A notification's values; `isLocal`, `screen` and `screenID` are `nil` when unknown.
    public init(kind: Kind, frameBegin: Frame, frameEnd: Frame, animationDuration: Double, animationCurve: Int,
                isLocal: Bool? = nil, screen: Frame? = nil, screenID: Int? = nil) {
        self.kind = kind
        self.frameBegin = frameBegin
        self.frameEnd = frameEnd
        self.animationDuration = animationDuration
        self.animationCurve = animationCurve
        self.isLocal = isLocal
        self.screen = screen
        self.screenID = screenID
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
    /// A hardware keyboard: the frame is mostly below the screen, or a bar shorter than any
    /// software keyboard; only the shortcut bar and/or the field's input accessory view show,
    /// at the bottom (any idiom).
    case hardware
    /// No keyboard on screen.
    case hidden
}

/// The device family, as `UIUserInterfaceIdiom`.
public enum DeviceIdiom: String, Sendable, Equatable {
    /// An iPhone (or iPod touch).
    case phone
    /// An iPad: undocked, split and floating keyboards exist here.
    case pad
    /// A Mac running the app (Mac Catalyst, or an iPad app on Apple silicon).
    case mac
    /// Apple TV.
    case tv
    /// Apple Vision Pro.
    case vision
}
