#if os(iOS)
import UIKit
import WatchdogWire

/// The UIKit glue: feeds a `WatchdogAgent` keyboard notifications (including
/// `keyboardDidChangeFrame`, which an undocked iPad keyboard sends while dragged, with
/// `keyboardIsLocalUserInfoKey` and the keyboard's screen), the window scene's lifecycle, window
/// changes and a timer tick. At each tick it also looks for interaction locks by itself
/// (transition coordinators still there, views ignoring touches: `LockObserver`), and when
/// protected data becomes available it retries the outbox writes that failed while the
/// device was locked. All logic lives in the agent; this only translates.
///
/// Extension-safe: it never touches `UIApplication.shared` — the lifecycle comes from the
/// window's `UIScene` notifications. The timer runs in the run loop's `.common` modes, so it
/// keeps checking while the user scrolls.
///
/// ```swift
/// let driver = WatchdogUIKitDriver(agent: agent, window: window)
/// driver.start()
/// driver.watch(toolbar, named: "composeToolbar", screen: "ComposeViewController",
///              expectedFrame: { [unowned self] in self.expectedToolbarFrame() },
///              fix: { [unowned self] in self.toolbarBottom.constant = -self.keyboardHeight; self.view.layoutIfNeeded() })
/// ```
@MainActor
public final class WatchdogUIKitDriver {
    /// The agent it feeds.
    public let agent: WatchdogAgent
    private weak var window: UIWindow?
    private var observers: [NSObjectProtocol] = []
    private var geometryObservation: NSKeyValueObservation?
    private var timer: Timer?
    private var interval: Double = 0

    /// - Parameters:
    ///   - agent: the agent to feed (one per window scene).
    ///   - window: the window whose keyboard-dependent views are watched.
    public init(agent: WatchdogAgent, window: UIWindow) {
        self.agent = agent
        self.window = window
    }

    /// Observes notifications, starts the session and the timer.
    public func start() {
        let center = NotificationCenter.default
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
                    self?.keyboard(kind, info, screen: screen.map { Frame($0.bounds) })
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
                    self.agent.setAppState(state)
                    self.windowDidChange()
                }
            })
        }
        // Locked before its first unlock, the outbox could not be written: retry at once now.
        observers.append(center.addObserver(forName: UIApplication.protectedDataDidBecomeAvailableNotification, object: nil, queue: .main) { [weak self] _ in
            MainActor.assumeIsolated { self?.agent.retryPendingWrites() }
        })
        if #available(iOS 16.0, *), let scene = window?.windowScene {
            // Stage Manager resizes and moves windows without any keyboard notification.
            geometryObservation = scene.observe(\.effectiveGeometry) { [weak self] _, _ in
                MainActor.assumeIsolated { self?.windowDidChange() }
            }
        }
        let active = window?.windowScene.map { $0.activationState == .foregroundActive } ?? true
        agent.setAppState(active ? .active : .inactive)
        if let frame = windowFrame() { agent.windowChanged(frame) }
        agent.layout.firstResponder = { [weak self] in self?.firstResponder() ?? .none }
        agent.startSession()
        scheduleTimer()
    }

    /// Removes the observers and stops the timer (the scene disconnected).
    public func stop() {
        observers.forEach(NotificationCenter.default.removeObserver)
        observers = []
        geometryObservation = nil
        timer?.invalidate()
        timer = nil
    }

    /// Tell the agent the window changed size or place, e.g. from
    /// `viewWillTransition(to:with:)` (pass the coordinator's `transitionDuration`) or
    /// `windowScene(_:didUpdate:interfaceOrientation:traitCollection:)`. The driver also
    /// notices changes by itself on scene geometry updates (iOS 16+) and on every tick.
    public func windowDidChange(animationDuration: Double = 0) {
        guard let frame = windowFrame() else { return }
        if let window { agent.layout.safeAreaBottom = Double(window.safeAreaInsets.bottom) }
        if frame != agent.layout.window || animationDuration > 0 { agent.windowChanged(frame, animationDuration: animationDuration) }
    }

    /// Watches a keyboard-dependent view: `expectedFrame` says where it belongs (in its
    /// window's coordinates). With `auto_fix` on, `fix` is called on a glitch: change the
    /// constraints (or insets) that place the view, not its frame — Auto Layout would undo
    /// that. The next tick checks that the view is where it belongs before the report says
    /// `auto_fixed`.
    ///
    /// - Returns: a token for `agent.layout.unwatch(_:)`.
    @discardableResult
    public func watch(_ view: UIView, named name: String, screen: String? = nil, expectedFrame: @escaping () -> CGRect?,
                      fix: (() -> Void)? = nil) -> Int {
        agent.layout.watch(WatchedView(
            name: name, screen: screen,
            expectedFrame: { expectedFrame().map(Frame.init) },
            actualFrame: { [weak view] in
                guard let view, let window = view.window else { return nil }
                return Frame(view.convert(view.bounds, to: window))
            },
            autoFix: fix
        ))
    }

    /// The window's frame in screen coordinates: what keyboard frames are relative to.
    private func windowFrame() -> Frame? {
        guard let window else { return nil }
        return Frame(window.convert(window.bounds, to: window.screen.coordinateSpace))
    }

    private func keyboard(_ kind: KeyboardEvent.Kind, _ info: KeyboardInfo, screen: Frame?) {
        if let frame = windowFrame(), frame != agent.layout.window { agent.windowChanged(frame) }
        let screen = screen ?? window.map { Frame($0.screen.bounds) }
        agent.keyboardEvent(KeyboardEvent(kind: kind, frameBegin: Frame(info.begin), frameEnd: Frame(info.end),
                                          animationDuration: info.duration, animationCurve: info.curve,
                                          isLocal: info.isLocal, screen: screen))
    }

    private func firstResponder() -> FirstResponder {
        guard let window else { return .none }
        if let responder = Self.findFirstResponder(in: window) {
            return .input(Frame(responder.convert(responder.bounds, to: window)), caret: Self.caret(of: responder, in: window))
        }
        // A text field in another window of the scene (an alert), or a view controller that
        // became first responder for its inputView/inputAccessoryView.
        let others = window.windowScene?.windows.filter { $0 !== window } ?? []
        if others.contains(where: { Self.findFirstResponder(in: $0) != nil }) { return .outsideWindow }
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

    private static func findFirstResponder(in view: UIView) -> UIView? {
        if view.isFirstResponder { return view }
        for subview in view.subviews {
            if let found = findFirstResponder(in: subview) { return found }
        }
        return nil
    }

    private static func firstResponderController(from controller: UIViewController?) -> Bool {
        guard let controller else { return false }
        if controller.isFirstResponder { return true }
        if firstResponderController(from: controller.presentedViewController) { return true }
        return controller.children.contains { firstResponderController(from: $0) }
    }

    private func scheduleTimer() {
        interval = agent.config.current.watchdogIntervalS
        timer?.invalidate()
        let timer = Timer(timeInterval: interval, repeats: true) { [weak self] _ in
            MainActor.assumeIsolated {
                guard let self else { return }
                self.windowDidChange()
                if let window = self.window {
                    self.agent.observeLocks(LockObserver.observe(window, firstResponder: Self.findFirstResponder(in: window)))
                }
                self.agent.tick()
                if self.agent.config.current.watchdogIntervalS != self.interval { self.scheduleTimer() }
            }
        }
        // `.common`: also while a scroll view tracks a finger (`.tracking`), when glitches happen.
        RunLoop.main.add(timer, forMode: .common)
        self.timer = timer
    }
}

/// The values of a keyboard notification's `userInfo`, read in the observer's block, before
/// the hop to the main actor (a `Notification` is not Sendable).
private struct KeyboardInfo: Sendable {
    /// `UIResponder`'s userInfo keys: class properties of a main-actor class, so read on the
    /// main actor (in `start()`) and handed to the blocks.
    struct Keys: Sendable {
        let begin: String, end: String, duration: String, curve: String, isLocal: String

        @MainActor init() {
            begin = UIResponder.keyboardFrameBeginUserInfoKey
            end = UIResponder.keyboardFrameEndUserInfoKey
            duration = UIResponder.keyboardAnimationDurationUserInfoKey
            curve = UIResponder.keyboardAnimationCurveUserInfoKey
            isLocal = UIResponder.keyboardIsLocalUserInfoKey
        }
    }

    var begin: CGRect
    var end: CGRect
    var duration: Double
    var curve: Int
    /// `nil` when the key is absent (before iOS 9).
    var isLocal: Bool?

    init(_ notification: Notification, keys: Keys) {
        let info = notification.userInfo ?? [:]
        begin = (info[keys.begin] as? NSValue)?.cgRectValue ?? .zero
        end = (info[keys.end] as? NSValue)?.cgRectValue ?? .zero
        duration = (info[keys.duration] as? NSNumber)?.doubleValue ?? 0
        curve = (info[keys.curve] as? NSNumber)?.intValue ?? 0
        isLocal = (info[keys.isLocal] as? NSNumber)?.boolValue
    }
}

extension Frame {
    /// A UIKit rectangle (a window's or a view's frame) as WatchdogKit's `Frame`:
    /// `WatchdogAgent(settings:window:)` takes the key window's frame in screen coordinates.
    public init(_ rect: CGRect) {
        self.init(x: Double(rect.origin.x), y: Double(rect.origin.y), width: Double(rect.size.width), height: Double(rect.size.height))
    }
}
#endif
