import WatchdogWire

/// Where a watched view belongs, said once instead of computed by the host: what SwiftUI's
/// `.watchdog(_:screen:expect:)` modifier takes, usable from UIKit too
/// (`LayoutWatchdog.watch(_:screen:expect:actualFrame:fix:)`). The view keeps its own size and
/// x; the expectation places its bottom edge.
public enum ViewExpectation {
    /// What an expectation is judged with, in window coordinates.
    public struct Context: Sendable, Equatable {
        /// Where the view is.
        public var actual: Frame
        /// The window's size (its frame in screen coordinates).
        public var window: Frame
        /// What the keyboard covers at the window's bottom (0 when hidden, or floating).
        public var keyboardHeight: Double
        /// The window's bottom safe-area inset (home indicator), without the keyboard.
        public var safeAreaBottom: Double

        /// What an expectation is judged on at one tick.
        public init(actual: Frame, window: Frame, keyboardHeight: Double, safeAreaBottom: Double) {
            self.actual = actual
            self.window = window
            self.keyboardHeight = keyboardHeight
            self.safeAreaBottom = safeAreaBottom
        }
    }

    /// Sitting on the keyboard's top edge while it covers the bottom, else on the safe area's
    /// bottom: a composer or bottom bar that follows the keyboard
    /// (`.safeAreaInset(edge: .bottom)`, a toolbar above the keyboard).
    case keyboardTop
    /// On the safe area's bottom whatever the keyboard does: a view under
    /// `.ignoresSafeArea(.keyboard)` that must not move.
    case safeAreaBottom
    /// The host's own rule: the expected frame, or `nil` for "not checked now".
    case custom((Context) -> Frame?)

    /// The frame the view should have.
    public func expectedFrame(_ context: Context) -> Frame? {
        let bottom: Double
        switch self {
        case .keyboardTop:
            bottom = context.keyboardHeight > 0 ? context.window.height - context.keyboardHeight : context.window.height - context.safeAreaBottom
        case .safeAreaBottom:
            bottom = context.window.height - context.safeAreaBottom
        case .custom(let rule):
            return rule(context)
        }
        let actual = context.actual
        return Frame(x: actual.x, y: bottom - actual.height, width: actual.width, height: actual.height)
    }
}

extension LayoutWatchdog {
    /// Watches a view against an expectation instead of a computed frame: `actualFrame` says
    /// where it is (window coordinates, `nil`: not on screen now), `fix` as in `WatchedView`.
    /// Returns a token for `unwatch`.
    @discardableResult
    public func watch(_ name: String, screen: String? = nil, expect: ViewExpectation, actualFrame: @escaping () -> Frame?,
                      fix: (() -> Void)? = nil) -> Int {
        watch(WatchedView(
            name: name, screen: screen,
            expectedFrame: { [unowned self] in
                guard let actual = actualFrame() else { return nil }
                return expect.expectedFrame(ViewExpectation.Context(actual: actual, window: window, keyboardHeight: keyboard.current?.height ?? 0,
                                                                    safeAreaBottom: safeAreaBottom))
            },
            actualFrame: actualFrame, autoFix: fix))
    }
}
