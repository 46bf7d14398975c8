#if os(iOS)
import UIKit
import WatchdogWire

/// The UIKit glue for one window scene: feeds the app's `WatchdogAgent` (one per app) this
/// window's keyboard notifications (including `keyboardDidChangeFrame`, which an undocked iPad
/// keyboard sends while dragged, with `keyboardIsLocalUserInfoKey` and the keyboard's screen),
/// its scene's lifecycle, window changes and a timer tick. At each tick it also looks for
/// interaction locks by itself (transition coordinators still there, views ignoring touches:
/// `LockObserver`) — only while the agent collects and the scene is active. All logic lives in
/// the agent; this only translates.
///
/// One driver per window scene, all feeding the same agent: every driver hears every keyboard
/// notification, and the agent gives each to the window that holds the first responder
/// (`KeyboardRouting`). Extension-safe: it never touches `UIApplication.shared` — the lifecycle
/// comes from the window's `UIScene` notifications, the background flush runs in a
/// `ProcessInfo` expiring activity. The timer runs in the run loop's `.common` modes, so it
/// keeps checking while the user scrolls. `start()` twice observes once; a driver dropped
/// without `stop()` removes its observers and timer anyway.
///
/// ```swift
/// let driver = WatchdogUIKitDriver(agent: agent, window: window)
/// driver.start()
/// driver.watch(toolbar, named: "composeToolbar", screen: "ComposeViewController", expect: .keyboardTop,
///              fix: { [unowned self] in self.toolbarBottom.constant = -self.keyboardHeight; self.view.layoutIfNeeded() })
/// ```
@MainActor
public final class WatchdogUIKitDriver {
    /// The agent it feeds.
    public let agent: WatchdogAgent
    /// This window's scene in the agent.
    public let scene: WatchdogScene
    private let sceneID: ObjectIdentifier
    private weak var window: UIWindow?
    private let registrations = DriverRegistrations()
    private var geometryObservation: NSKeyValueObservation?
    private var interval: Double = 0

    /// - Parameters:
    ///   - agent: the app's agent (one for all its window scenes).
    ///   - window: the window whose keyboard-dependent views are watched.
    public init(agent: WatchdogAgent, window: UIWindow) {
        self.agent = agent
        self.window = window
        scene = agent.attachScene(window: Frame(window.convert(window.bounds, to: window.screen.coordinateSpace)))
        sceneID = ObjectIdentifier(scene)
        scene.windowID = ObjectIdentifier(window).hashValue
        scene.screenID = { [weak window] in window.map { ObjectIdentifier($0.screen).hashValue } }
        scene.isKey = { [weak window] in
            guard let window else { return false }
            return window.windowScene?.windows.contains { $0.isKeyWindow } ?? window.isKeyWindow
        }
        scene.layout.firstResponder = { [weak self] in self?.firstResponder() ?? .none }
        // SwiftUI views already in the window (a hosting controller at the root) registered
        // before this scene existed: they look again now.
        NotificationCenter.default.post(name: Self.didAttachWindow, object: window)
    }

    /// Posted (object: the window) once a driver's scene exists for a window.
    static let didAttachWindow = Notification.Name("WatchdogKitDriverDidAttachWindow")

    deinit {
        registrations.stop()
        let agent = agent, scene = sceneID
        Task { @MainActor in agent.detachScene(identifiedBy: scene) }
    }

    /// Observes notifications, starts the session (once per app) and the timer. Calling it
    /// again while started does nothing.
    public func start() {
        guard registrations.start({ [unowned self] center in observe(center) }) else { return }
        if #available(iOS 16.0, *), let windowScene = window?.windowScene {
            // Stage Manager resizes and moves windows without any keyboard notification.
            geometryObservation = windowScene.observe(\.effectiveGeometry) { [weak self] _, _ in
                MainActor.assumeIsolated { self?.windowDidChange() }
            }
        }
        let active = window?.windowScene.map { $0.activationState == .foregroundActive } ?? true
        agent.setAppState(active ? .active : .inactive, for: scene)
        windowDidChange()
        agent.startSessionIfNeeded()
        scheduleTimer()
    }

    /// Removes the observers and stops the timer (the scene disconnected); its scene stays in
    /// the agent, in the background, until the driver goes away.
    public func stop() {
        registrations.stop()
        geometryObservation = nil
        agent.setAppState(.background, for: scene)
    }

    private func observe(_ center: NotificationCenter) -> [NSObjectProtocol] {
        var observers: [NSObjectProtocol] = []
        let keyboard: [(Notification.Name, KeyboardEvent.Kind)] = [
            (UIResponder.keyboardWillShowNotification, .willShow), (UIResponder.keyboardDidShowNotification, .didShow),
            (UIResponder.keyboardWillHideNotification, .willHide), (UIResponder.keyboardDidHideNotification, .didHide),
            (UIResponder.keyboardWillChangeFrameNotification, .willChangeFrame), (UIResponder.keyboardDidChangeFrameNotification, .didChangeFrame),
        ]
        // The block is `@Sendable` in current SDKs: only Sendable values cross into the main
        // actor — the userInfo read into a `KeyboardInfo` (with the keys, main-actor class
        // properties, read here once), the object cast to `UIScreen` (a main-actor class).
        let keys = KeyboardInfo.Keys()
        for (name, kind) in keyboard {
            observers.append(center.addObserver(forName: name, object: nil, queue: .main) { [weak self] notification in
                let info = KeyboardInfo(notification, keys: keys)
                // iOS 16.1+: the notification's object is the keyboard's screen.
                let screen = notification.object as? UIScreen
                MainActor.assumeIsolated {
                    self?.keyboard(kind, info, screen: screen)
                }
            })
        }
        // The window's scene, not UIApplication: per scene on iPad, and available in extensions.
        let lifecycle: [(Notification.Name, AppState)] = [
            (UIScene.didActivateNotification, .active), (UIScene.willDeactivateNotification, .inactive),
            (UIScene.didEnterBackgroundNotification, .background), (UIScene.willEnterForegroundNotification, .inactive),
        ]
        for (name, state) in lifecycle {
            observers.append(center.addObserver(forName: name, object: nil, queue: .main) { [weak self] notification in
                let scene = notification.object as? UIScene
                MainActor.assumeIsolated {
                    guard let self, scene == nil || scene === self.window?.windowScene else { return }
                    self.agent.setAppState(state, for: self.scene)
                    self.windowDidChange()
                    if state == .background, self.agent.appState == .background { self.flushInBackground() }
                }
            })
        }
        // Locked before its first unlock, the storage could not be read or written: now it can.
        observers.append(center.addObserver(forName: UIApplication.protectedDataDidBecomeAvailableNotification, object: nil, queue: .main) { [weak self] _ in
            MainActor.assumeIsolated { self?.agent.protectedDataDidBecomeAvailable() }
        })
        return observers
    }

    /// The app's last scene went to the background: upload the outbox while the system lets the
    /// process run (an expiring activity, not `UIApplication`'s background task, which app
    /// extensions cannot use), never over a network in Low Data Mode.
    private func flushInBackground() {
        let agent = agent
        let done = FlushDone()
        // The block runs on a background queue and the activity lasts until it returns; it is
        // called again with `expired` true when the process is about to be suspended.
        ProcessInfo.processInfo.performExpiringActivity(withReason: "WatchdogKit: uploading waiting reports") { expired in
            guard !expired else {
                done.signal()
                return
            }
            Task { @MainActor in
                await agent.flushForBackground()
                done.signal()
            }
            done.wait(seconds: 25)
        }
    }

    /// Tell the agent the window changed size or place, e.g. from
    /// `viewWillTransition(to:with:)` (pass the coordinator's `transitionDuration`) or
    /// `windowScene(_:didUpdate:interfaceOrientation:traitCollection:)`. The driver also
    /// notices changes by itself on scene geometry updates (iOS 16+) and on every tick.
    public func windowDidChange(animationDuration: Double = 0) {
        guard let frame = windowFrame() else { return }
        if let window { scene.layout.safeAreaBottom = Double(window.safeAreaInsets.bottom) }
        if frame != scene.layout.window || animationDuration > 0 { scene.layout.windowChanged(frame, animationDuration: animationDuration) }
    }

    /// Watches a keyboard-dependent view: `expectedFrame` says where it belongs (in its
    /// window's coordinates). With `auto_fix` on, `fix` is called on a glitch: change the
    /// constraints (or insets) that place the view, not its frame — Auto Layout would undo
    /// that. The next tick checks that the view is where it belongs before the report says
    /// `auto_fixed`.
    ///
    /// - Returns: a token for `scene.layout.unwatch(_:)`.
    @discardableResult
    public func watch(_ view: UIView, named name: String, screen: String? = nil, expectedFrame: @escaping () -> CGRect?,
                      fix: (() -> Void)? = nil) -> Int {
        scene.layout.watch(WatchedView(
            name: name, screen: screen,
            expectedFrame: { expectedFrame().map(Frame.init) },
            actualFrame: { [weak view] in view.flatMap(LayoutContainerReader.frameInWindow) },
            autoFix: fix
        ))
    }

    /// Watches a keyboard-dependent view against an expectation, judged in what it is laid out
    /// in: its view controller's view (the first one up its responder chain) — that view's safe
    /// area, and on iOS 15+ its `keyboardLayoutGuide` — so a bar above a tab bar or a toolbar,
    /// in a form sheet or a split view's column is where it belongs. `fix` as above.
    ///
    /// - Returns: a token for `scene.layout.unwatch(_:)`.
    @discardableResult
    public func watch(_ view: UIView, named name: String, screen: String? = nil, expect: ViewExpectation, fix: (() -> Void)? = nil) -> Int {
        scene.layout.watch(name, screen: screen, expect: expect,
                           actualFrame: { [weak view] in view.flatMap(LayoutContainerReader.frameInWindow) },
                           container: { [weak view] in view.flatMap(LayoutContainerReader.container) }, fix: fix)
    }

    /// The window's frame in screen coordinates: what keyboard frames are relative to.
    private func windowFrame() -> Frame? {
        guard let window else { return nil }
        return Frame(window.convert(window.bounds, to: window.screen.coordinateSpace))
    }

    private func keyboard(_ kind: KeyboardEvent.Kind, _ info: KeyboardInfo, screen: UIScreen?) {
        if let frame = windowFrame(), frame != scene.layout.window { scene.layout.windowChanged(frame) }
        let bounds = (screen ?? window?.screen).map { Frame($0.bounds) }
        agent.keyboardEvent(KeyboardEvent(kind: kind, frameBegin: Frame(info.begin), frameEnd: Frame(info.end),
                                          animationDuration: info.duration, animationCurve: info.curve,
                                          isLocal: info.isLocal, screen: bounds, screenID: screen.map { ObjectIdentifier($0).hashValue }),
                            in: scene)
    }

    private func firstResponder() -> FirstResponder {
        guard let window else { return .none }
        if let responder = LockObserver.firstResponder(in: window) {
            return .input(Frame(responder.convert(responder.bounds, to: window)), caret: Self.caret(of: responder, in: window))
        }
        // A text field in another window of the scene (an alert), or a view controller that
        // became first responder for its inputView/inputAccessoryView.
        let others = window.windowScene?.windows.filter { $0 !== window } ?? []
        if others.contains(where: { LockObserver.firstResponder(in: $0) != nil }) { return .outsideWindow }
        if Self.firstResponderController(from: window.rootViewController) { return .outsideWindow }
        return .none
    }

    /// The caret (or the end of the selection), in window coordinates, when the view tells.
    private static func caret(of view: UIView, in window: UIWindow) -> Frame? {
        guard let input = view as? UITextInput, let range = input.selectedTextRange else { return nil }
        let rect = input.caretRect(for: range.end)
        guard !rect.isNull, !rect.isInfinite, rect.height > 0 else { return nil }
        return Frame(view.convert(rect, to: window))
    }

    private static func firstResponderController(from controller: UIViewController?) -> Bool {
        guard let controller else { return false }
        if controller.isFirstResponder { return true }
        if firstResponderController(from: controller.presentedViewController) { return true }
        return controller.children.contains { firstResponderController(from: $0) }
    }

    private func scheduleTimer() {
        interval = agent.tickInterval
        let timer = Timer(timeInterval: interval, repeats: true) { [weak self] _ in
            MainActor.assumeIsolated {
                guard let self else { return }
                self.windowDidChange()
                let window = self.window
                // The walk over the window's controllers runs only when the agent judges this scene.
                self.agent.tick(self.scene) {
                    window.map { LockObserver.observe($0, firstResponder: LockObserver.firstResponder(in: $0)) } ?? .clear
                }
                if self.agent.tickInterval != self.interval { self.scheduleTimer() }
            }
        }
        // `.common`: also while a scroll view tracks a finger (`.tracking`), when glitches happen.
        RunLoop.main.add(timer, forMode: .common)
        registrations.setTimer(timer)
    }
}
/// The background flush is over (or must stop): a semaphore, which the iOS 16.5 SDK does not
/// mark `Sendable` though it is made to be signalled from another thread.
private final class FlushDone: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    func signal() { semaphore.signal() }

    func wait(seconds: Double) { _ = semaphore.wait(timeout: .now() + seconds) }
}
#endif
