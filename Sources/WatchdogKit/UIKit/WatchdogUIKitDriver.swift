#if canImport(UIKit) && !os(watchOS)
import UIKit
import WatchdogWire

/// The UIKit glue: feeds a `WatchdogAgent` keyboard notifications (including
/// `keyboardDidChangeFrame`, which an undocked iPad keyboard sends while dragged), app
/// lifecycle changes and a timer tick. All logic lives in the agent; this only translates.
///
/// ```swift
/// let driver = WatchdogUIKitDriver(agent: agent, window: window)
/// driver.start()
/// driver.watch(toolbar, named: "composeToolbar", screen: "ComposeViewController",
///              expectedFrame: { [unowned self] in self.expectedToolbarFrame() })
/// ```
@MainActor
public final class WatchdogUIKitDriver {
    public let agent: WatchdogAgent
    private weak var window: UIWindow?
    private var observers: [NSObjectProtocol] = []
    private var timer: Timer?
    private var interval: Double = 0

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
        for (name, kind) in keyboard {
            observers.append(center.addObserver(forName: name, object: nil, queue: .main) { [weak self] notification in
                let info = KeyboardInfo(notification)
                MainActor.assumeIsolated { self?.keyboard(kind, info) }
            })
        }
        let lifecycle: [(Notification.Name, AppState)] = [
            (UIApplication.didBecomeActiveNotification, .active), (UIApplication.willResignActiveNotification, .inactive),
            (UIApplication.didEnterBackgroundNotification, .background), (UIApplication.willEnterForegroundNotification, .inactive),
        ]
        for (name, state) in lifecycle {
            observers.append(center.addObserver(forName: name, object: nil, queue: .main) { [weak self] _ in
                MainActor.assumeIsolated { self?.agent.setAppState(state) }
            })
        }
        agent.setAppState(UIApplication.shared.applicationState == .active ? .active : .inactive)
        agent.layout.firstResponder = { [weak self] in self?.firstResponder() ?? .none }
        agent.startSession()
        scheduleTimer()
    }

    public func stop() {
        observers.forEach(NotificationCenter.default.removeObserver)
        observers = []
        timer?.invalidate()
        timer = nil
    }

    /// Watches a keyboard-dependent view: `expectedFrame` says where it belongs (in its
    /// window's coordinates); auto-fix moves it there.
    @discardableResult
    public func watch(_ view: UIView, named name: String, screen: String? = nil, expectedFrame: @escaping () -> CGRect?) -> Int {
        agent.layout.watch(WatchedView(
            name: name, screen: screen,
            expectedFrame: { expectedFrame().map(Frame.init) },
            actualFrame: { [weak view] in
                guard let view, let window = view.window else { return nil }
                return Frame(view.convert(view.bounds, to: window))
            },
            autoFix: { [weak view] in
                guard let view, let superview = view.superview, let window = view.window, let target = expectedFrame() else { return }
                view.frame = superview.convert(target, from: window)
            }
        ))
    }

    private func keyboard(_ kind: KeyboardEvent.Kind, _ info: KeyboardInfo) {
        if let window {
            // The key window's frame in screen coordinates: what keyboard frames are relative to.
            agent.layout.window = Frame(window.convert(window.bounds, to: window.screen.coordinateSpace))
        }
        agent.keyboardEvent(KeyboardEvent(kind: kind, frameBegin: Frame(info.begin), frameEnd: Frame(info.end),
                                          animationDuration: info.duration, animationCurve: info.curve))
    }

    private func firstResponder() -> FirstResponder {
        guard let window, let responder = Self.findFirstResponder(in: window) else { return .none }
        return .input(Frame(responder.convert(responder.bounds, to: window)))
    }

    private static func findFirstResponder(in view: UIView) -> UIView? {
        if view.isFirstResponder { return view }
        for subview in view.subviews {
            if let found = findFirstResponder(in: subview) { return found }
        }
        return nil
    }

    private func scheduleTimer() {
        interval = agent.config.current.watchdogIntervalS
        timer?.invalidate()
        timer = Timer.scheduledTimer(withTimeInterval: interval, repeats: true) { [weak self] _ in
            MainActor.assumeIsolated {
                guard let self else { return }
                self.agent.tick()
                if self.agent.config.current.watchdogIntervalS != self.interval { self.scheduleTimer() }
            }
        }
    }
}

/// The values of a keyboard notification's `userInfo`, read on the posting thread.
private struct KeyboardInfo: Sendable {
    var begin: CGRect
    var end: CGRect
    var duration: Double
    var curve: Int

    init(_ notification: Notification) {
        let info = notification.userInfo ?? [:]
        begin = (info[UIResponder.keyboardFrameBeginUserInfoKey] as? NSValue)?.cgRectValue ?? .zero
        end = (info[UIResponder.keyboardFrameEndUserInfoKey] as? NSValue)?.cgRectValue ?? .zero
        duration = (info[UIResponder.keyboardAnimationDurationUserInfoKey] as? NSNumber)?.doubleValue ?? 0
        curve = (info[UIResponder.keyboardAnimationCurveUserInfoKey] as? NSNumber)?.intValue ?? 0
    }
}

extension Frame {
    init(_ rect: CGRect) {
        self.init(x: Double(rect.origin.x), y: Double(rect.origin.y), width: Double(rect.size.width), height: Double(rect.size.height))
    }
}
#endif
