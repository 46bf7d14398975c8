/// Whose keyboard a notification of this app is, as far as one window goes.
public enum KeyboardOwner: String, Sendable, Equatable {
    /// This window's: it holds the first responder (or, none holding it, it is the key window).
    case thisWindow
    /// Another window's of the app on the same screen (iPad: two windows side by side): it says
    /// nothing about this window's layout, and this window is not judged until it hides or
    /// comes back here.
    case anotherWindow
    /// The keyboard is on another screen than this window's (a window on an external display):
    /// it covers nothing here.
    case anotherScreen
}

/// Which window of the app a keyboard notification is for. UIKit posts every keyboard
/// notification to the whole app (`keyboardIsLocalUserInfoKey` is per app, not per scene), so
/// each window's driver hears the keyboard of every other window: the keyboard's geometry is
/// applied only to the window whose scene holds the first responder, and a keyboard on another
/// screen (the notification's object, iOS 16.1+) covers nothing. Plain values, so the decision is
/// tested on Linux with recorded traces.
public enum KeyboardRouting {
    /// What one window says about itself when a keyboard notification arrives.
    public struct Window: Sendable, Equatable {
        /// Its scene holds the first responder (an input, or a responder with its own input view).
        public var holdsFirstResponder: Bool
        /// Its scene has the app's key window.
        public var isKey: Bool
        /// The identity of its screen; `nil` when unknown.
        public var screenID: Int?

        /// A window as the driver (or a trace) sees it.
        public init(holdsFirstResponder: Bool, isKey: Bool, screenID: Int? = nil) {
            self.holdsFirstResponder = holdsFirstResponder
            self.isKey = isKey
            self.screenID = screenID
        }
    }

    /// Whose `event` is for `window`, given the app's `others` windows.
    ///
    /// - A keyboard on another screen than the window's is `anotherScreen`.
    /// - The window whose scene holds the first responder owns it.
    /// - Another window holding it makes it `anotherWindow`.
    /// - Nobody holding it (a keyboard without input — a glitch, judged once): the key window
    ///   owns it. An app with one window owns every keyboard, as before.
    public static func owner(of event: KeyboardEvent, for window: Window, others: [Window]) -> KeyboardOwner {
        if let keyboardScreen = event.screenID, let screen = window.screenID, keyboardScreen != screen { return .anotherScreen }
        if window.holdsFirstResponder || others.isEmpty { return .thisWindow }
        if others.contains(where: \.holdsFirstResponder) { return .anotherWindow }
        return window.isKey ? .thisWindow : .anotherWindow
    }
}
