import WatchdogWire

/// What a watched view is laid out in: its hosting view (the view controller's view the UIKit
/// driver finds up the view's responder chain, or a SwiftUI view's hosting view), in window
/// coordinates. A composer above a tab bar or a toolbar, or in an iPad form sheet or a split
/// view's column, belongs at the bottom of *this* view's safe area — not the window's.
public struct LayoutContainer: Sendable, Equatable {
    /// The hosting view's frame in window coordinates.
    public var frame: Frame
    /// The window y of the bottom of the hosting view's safe area, the keyboard left out
    /// (`safeAreaLayoutGuide.layoutFrame.maxY`): above a tab bar, a toolbar, the home indicator.
    public var safeAreaBottom: Double
    /// The window y of the top of the hosting view's `keyboardLayoutGuide.layoutFrame` (iOS 15+):
    /// UIKit's own account of where content that follows the keyboard ends. `nil` below iOS 15.
    public var keyboardGuideTop: Double?

    /// A hosting view as the glue (or a trace) measures it.
    public init(frame: Frame, safeAreaBottom: Double, keyboardGuideTop: Double? = nil) {
        self.frame = frame
        self.safeAreaBottom = safeAreaBottom
        self.keyboardGuideTop = keyboardGuideTop
    }

    /// The window itself, whose safe area ends `safeAreaInset` points above its bottom: what a
    /// view without a known hosting view is judged against.
    public static func window(_ window: Frame, safeAreaInset: Double) -> LayoutContainer {
        LayoutContainer(frame: Frame(x: 0, y: 0, width: window.width, height: window.height), safeAreaBottom: window.height - safeAreaInset)
    }
}

/// Where a watched view belongs, said once instead of computed by the host: what SwiftUI's
/// `.watchdog(_:screen:expect:)` modifier and the UIKit driver's `watch(_:named:screen:expect:fix:)`
/// take. The view keeps its own size and x; the expectation places its bottom edge in what it
/// is laid out in (`LayoutContainer`).
public enum ViewExpectation {
    /// What an expectation is judged with, in window coordinates.
    public struct Context: Sendable, Equatable {
        /// Where the view is.
        public var actual: Frame
        /// The window's size (its frame in screen coordinates).
        public var window: Frame
        /// What the keyboard covers at the window's bottom (0 when hidden, or floating, or
        /// another window's).
        public var keyboardHeight: Double
        /// What the view is laid out in.
        public var container: LayoutContainer

        /// What an expectation is judged on at one tick.
        public init(actual: Frame, window: Frame, keyboardHeight: Double, container: LayoutContainer) {
            self.actual = actual
            self.window = window
            self.keyboardHeight = keyboardHeight
            self.container = container
        }

        /// A view laid out in the window itself, whose safe area ends `safeAreaBottom` points above
        /// its bottom.
        public init(actual: Frame, window: Frame, keyboardHeight: Double, safeAreaBottom: Double) {
            self.init(actual: actual, window: window, keyboardHeight: keyboardHeight, container: .window(window, safeAreaInset: safeAreaBottom))
        }

        /// How far above the window's bottom the container's safe area ends.
        public var safeAreaBottom: Double { window.height - container.safeAreaBottom }

        /// The window y of the keyboard's top edge, when it covers the window's bottom.
        public var keyboardTop: Double? { keyboardHeight > 0 ? window.height - keyboardHeight : nil }
    }

    /// Sitting on the keyboard's top edge while it covers the container's bottom, else on the
    /// container's safe-area bottom: a composer or bottom bar that follows the keyboard
    /// (`.safeAreaInset(edge: .bottom)`, a toolbar above the keyboard). On iOS 15+, where the
    /// hosting view's `keyboardLayoutGuide` ends is right too: a view pinned to it is where UIKit
    /// puts it.
    case keyboardTop
    /// On the container's safe-area bottom whatever the keyboard does: a view under
    /// `.ignoresSafeArea(.keyboard)` that must not move.
    case safeAreaBottom
    /// The host's own rule: the expected frame, or `nil` for "not checked now".
    case custom((Context) -> Frame?)

    /// The frame the view should have: of the places a correct layout can put it, the one
    /// nearest to where it is.
    public func expectedFrame(_ context: Context) -> Frame? {
        let bottoms: [Double]
        switch self {
        case .keyboardTop:
            // The keyboard covers the container only above its safe-area bottom: a short
            // hardware bar below a tab bar leaves the composer on the tab bar.
            let computed = min(context.container.safeAreaBottom, context.keyboardTop ?? .infinity)
            bottoms = [computed] + (context.container.keyboardGuideTop.map { [$0] } ?? [])
        case .safeAreaBottom:
            bottoms = [context.container.safeAreaBottom]
        case .custom(let rule):
            return rule(context)
        }
        let actual = context.actual
        let bottom = bottoms.min { abs($0 - actual.maxY) < abs($1 - actual.maxY) } ?? context.container.safeAreaBottom
        return Frame(x: actual.x, y: bottom - actual.height, width: actual.width, height: actual.height)
    }
}

extension LayoutWatchdog {
    /// Watches a view against an expectation instead of a computed frame: `actualFrame` says
    /// where it is (window coordinates, `nil`: not on screen now), `container` what it is laid
    /// out in (`nil`, or a closure returning `nil`: the window, with `safeAreaBottom`), `fix` as
    /// in `WatchedView`. Returns a token for `unwatch`.
    @discardableResult
    public func watch(_ name: String, screen: String? = nil, expect: ViewExpectation, actualFrame: @escaping () -> Frame?,
                      container: (() -> LayoutContainer?)? = nil, fix: (() -> Void)? = nil) -> Int {
        watch(WatchedView(
            name: name, screen: screen,
            expectedFrame: { [unowned self] in
                guard let actual = actualFrame() else { return nil }
                let laidOutIn = container?() ?? .window(window, safeAreaInset: safeAreaBottom)
                return expect.expectedFrame(ViewExpectation.Context(actual: actual, window: window, keyboardHeight: keyboardCoverage,
                                                                    container: laidOutIn))
            },
            actualFrame: actualFrame, autoFix: fix))
    }
}
