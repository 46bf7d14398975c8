#if os(iOS)
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
    /// Watches this view's frame in its window against `expect`, judged in what it is laid out
    /// in (its hosting controller's view: safe area, and on iOS 15+ `keyboardLayoutGuide`),
    /// while it is in a window a `WatchdogUIKitDriver` feeds: a mismatch on two ticks is a
    /// `view_frame_mismatch` report, as for UIKit views; with `auto_fix` on, `fix` is called
    /// first (change the state that places the view) and the next tick checks it held.
    ///
    /// ```swift
    /// ComposerBar()
    ///     .watchdog("composer", screen: "Compose", expect: .keyboardTop)
    /// ```
    public func watchdog(_ name: String, screen: String? = nil, expect: ViewExpectation, fix: (() -> Void)? = nil) -> some View {
        modifier(WatchdogModifier(watch: WatchdogProbe.Watch(name: name, screen: screen, expect: expect, fix: fix)))
    }
}

/// Puts a probe — an empty UIKit view the size of the watched one — behind the view: it is
/// measured in its window at each tick, and registers with the scene of whatever window it
/// moves into (`WatchdogAgent.scene(forWindow:)`). The decision is the agent's (`ViewExpectation`).
struct WatchdogModifier: ViewModifier {
    let watch: WatchdogProbe.Watch
    @Environment(\.watchdogAgent) private var agent

    func body(content: Content) -> some View {
        content.background(WatchdogProbe(watch: watch, agent: agent))
    }
}

/// The probe as SwiftUI places it.
struct WatchdogProbe: UIViewRepresentable {
    /// What to watch, as `.watchdog(_:screen:expect:fix:)` said.
    struct Watch {
        var name: String
        var screen: String?
        var expect: ViewExpectation
        var fix: (() -> Void)?
    }

    let watch: Watch
    let agent: WatchdogAgent?

    func makeUIView(context: Context) -> ProbeView {
        let view = ProbeView(frame: .zero)
        view.isUserInteractionEnabled = false
        view.update(watch: watch, agent: agent)
        return view
    }

    func updateUIView(_ view: ProbeView, context: Context) {
        view.update(watch: watch, agent: agent)
    }
}

/// An empty view behind the watched one: registered with its window's scene while it is in a
/// window, measured there at each tick. In a window no driver feeds yet (a SwiftUI root view is
/// in its window before the scene delegate starts the driver), it waits for the driver's
/// `didAttachWindow`.
final class ProbeView: UIView {
    private var watch: WatchdogProbe.Watch?
    private weak var agent: WatchdogAgent?
    private weak var scene: WatchdogScene?
    private var token: Int?
    private var waiting: NSObjectProtocol?

    deinit {
        if let waiting { NotificationCenter.default.removeObserver(waiting) }
    }

    func update(watch: WatchdogProbe.Watch, agent: WatchdogAgent?) {
        self.watch = watch
        guard agent !== self.agent else { return }
        self.agent = agent
        register()
    }

    override func didMoveToWindow() {
        super.didMoveToWindow()
        register()
    }

    /// Unwatches in the old scene, watches in the window's (if a driver feeds it).
    private func register() {
        if let token { scene?.layout.unwatch(token) }
        token = nil
        scene = nil
        guard let window, let agent, let watch else { return }
        guard let scene = agent.scene(forWindow: ObjectIdentifier(window).hashValue) else {
            waitForDriver(of: window)
            return
        }
        if let waiting { NotificationCenter.default.removeObserver(waiting) }
        waiting = nil
        self.scene = scene
        token = scene.layout.watch(watch.name, screen: watch.screen, expect: watch.expect,
                                   actualFrame: { [weak self] in self.flatMap(LayoutContainerReader.frameInWindow) },
                                   container: { [weak self] in self.flatMap(LayoutContainerReader.container) }, fix: watch.fix)
    }

    private func waitForDriver(of window: UIWindow) {
        guard waiting == nil else { return }
        waiting = NotificationCenter.default.addObserver(forName: WatchdogUIKitDriver.didAttachWindow, object: window, queue: .main) { [weak self] _ in
            MainActor.assumeIsolated { self?.register() }
        }
    }
}
#endif
