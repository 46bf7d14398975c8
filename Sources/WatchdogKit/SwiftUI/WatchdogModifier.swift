#if os(iOS)
import Locking
import SwiftUI
import WatchdogWire

/// The agent in SwiftUI's environment: set it once at the root
/// (`.environment(\.watchdogAgent, agent)`); `.watchdog(_:screen:expect:)` reads it.
public struct WatchdogAgentKey: EnvironmentKey {
    /// No agent: views are not watched until one is set.
    public static var defaultValue: WatchdogAgent? { nil }
}

extension EnvironmentValues {
    /// The agent `.watchdog(_:screen:expect:)` reports to; `nil`: nothing is watched.
    public var watchdogAgent: WatchdogAgent? {
        get { self[WatchdogAgentKey.self] }
        set { self[WatchdogAgentKey.self] = newValue }
    }
}

extension View {
    /// Watches this view's frame in its window against `expect` while it is on screen: a
    /// mismatch on two ticks is a `view_frame_mismatch` report, as for UIKit views; with
    /// `auto_fix` on, `fix` is called first (change the state that places the view) and the
    /// next tick checks it held.
    ///
    /// ```swift
    /// ComposerBar()
    ///     .watchdog("composer", screen: "Compose", expect: .keyboardTop)
    /// ```
    public func watchdog(_ name: String, screen: String? = nil, expect: ViewExpectation, fix: (() -> Void)? = nil) -> some View {
        modifier(WatchdogModifier(name: name, screen: screen, expect: expect, fix: fix))
    }
}

/// Measures the view with a `GeometryReader` behind it (its frame in `CoordinateSpace.global`, the
/// hosting window's) and registers it with the agent's layout watchdog between `onAppear` and
/// `onDisappear`. The decision is the agent's (`ViewExpectation`).
struct WatchdogModifier: ViewModifier {
    let name: String
    let screen: String?
    let expect: ViewExpectation
    let fix: (() -> Void)?
    @Environment(\.watchdogAgent) private var agent
    @State private var registration = Registration()

    func body(content: Content) -> some View {
        content
            // The reader and its listener together in the background: only this reader's
            // frame reaches the listener, not those of watched views nested inside `content`.
            .background(GeometryReader { proxy in
                Color.clear.preference(key: WatchdogFrameKey.self, value: proxy.frame(in: CoordinateSpace.global))
            }.onPreferenceChange(WatchdogFrameKey.self) { [registration] frame in
                registration.frame.withLock { $0 = Frame(x: Double(frame.origin.x), y: Double(frame.origin.y),
                                                          width: Double(frame.size.width), height: Double(frame.size.height)) }
            })
            .onAppear {
                guard let agent, registration.token.withLock({ $0 }) == nil else { return }
                let frame = registration.frame
                let token = agent.layout.watch(name, screen: screen, expect: expect, actualFrame: { frame.withLock { $0 } }, fix: fix)
                registration.token.withLock { $0 = token }
                registration.agent = agent
            }
            .onDisappear {
                if let token = registration.token.withLock({ $0 }) { registration.agent?.layout.unwatch(token) }
                registration.token.withLock { $0 = nil }
                registration.frame.withLock { $0 = nil }
            }
    }

    /// The view's last frame and its watch token, shared with the watchdog's closures.
    final class Registration: @unchecked Sendable {
        let frame = Locked<Frame?>(nil)
        let token = Locked<Int?>(nil)
        weak var agent: WatchdogAgent?
    }
}

/// The watched view's frame in the window, from its `GeometryReader`.
struct WatchdogFrameKey: PreferenceKey {
    static var defaultValue: CGRect { .zero }

    static func reduce(value: inout CGRect, nextValue: () -> CGRect) {
        value = nextValue()
    }
}
#endif
