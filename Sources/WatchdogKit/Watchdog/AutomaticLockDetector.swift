import Foundation
import WatchdogWire

/// What the UIKit driver sees at one tick that can block interaction: a navigation or
/// presentation transition still running (its `transitionCoordinator` is still there), and a
/// window or key view with user interaction disabled. Plain values, so the decision is tested
/// on Linux with scripted sequences.
public struct LockObservation: Sendable, Equatable {
    /// The kind of transition whose coordinator is there.
    public enum Transition: String, Sendable, CaseIterable {
        /// A navigation controller pushing (the controller it leaves stays on its stack).
        case push
        /// A navigation controller popping.
        case pop
        /// A view controller being presented.
        case presentation
        /// A presented view controller being dismissed.
        case dismissal
    }

    /// Which view has `isUserInteractionEnabled == false`.
    public enum DisabledView: String, Sendable {
        /// The key window itself.
        case window
        /// The first responder, or the top view controller's view.
        case keyView = "key_view"
    }

    /// A transition in progress, if any.
    public var transition: Transition?
    /// The transition is driven by a gesture (`isInteractive`), e.g. an interactive pop.
    public var interactive: Bool
    /// A window or key view ignoring touches, if any.
    public var disabledView: DisabledView?
    /// What identifies this transition or view (its object identity): a different one on the
    /// next tick is a new lock, not the same one held longer.
    public var identity: Int?
    /// The top view controller's name, for the report's `screen`.
    public var screen: String?

    /// What the driver sees at one tick (by default: nothing blocks).
    public init(transition: Transition? = nil, interactive: Bool = false, disabledView: DisabledView? = nil, identity: Int? = nil, screen: String? = nil) {
        self.transition = transition
        self.interactive = interactive
        self.disabledView = disabledView
        self.identity = identity
        self.screen = screen
    }

    /// Nothing blocks interaction.
    public static let clear = LockObservation()

    /// Whether something blocks interaction now.
    public var isLocked: Bool { transition != nil || disabledView != nil }

    /// The report's `lock.flags`: `push`, `pop`, `presentation` (also for a dismissal, with
    /// `dismissal`), `interactive`, `disabled_view` (with `disabled_window` for the window
    /// itself), and `automatic` (found by the driver, not reported by the host).
    public var flags: [String: Bool] {
        var flags = ["automatic": true]
        switch transition {
        case .push: flags["push"] = true
        case .pop: flags["pop"] = true
        case .presentation: flags["presentation"] = true
        case .dismissal: flags["presentation"] = true; flags["dismissal"] = true
        case nil: break
        }
        if interactive { flags["interactive"] = true }
        if let disabledView {
            flags["disabled_view"] = true
            if disabledView == .window { flags["disabled_window"] = true }
        }
        return flags
    }
}

/// Finds interaction locks by itself from what the UIKit driver observes at each tick — no host
/// call: a transition whose coordinator is still there after `lock_threshold_s` (a push or pop
/// interrupted, an interactive pop cancelled, a completion that never ran) or a view left with
/// interaction disabled that long is reported once as `interaction_lock`, with flags saying
/// which. The host's own locks (`WatchdogAgent.locks`) are watched separately.
///
/// Not thread-safe: drive it from one thread.
public final class AutomaticLockDetector {
    /// Times and reports each lock (threshold, background pauses, one report per lock).
    public let watchdog: InteractionLockWatchdog
    private var current: LockObservation?

    /// - Parameter watchdog: times and reports the locks found (its own, apart from the host's `locks`).
    public init(watchdog: InteractionLockWatchdog) {
        self.watchdog = watchdog
    }

    /// What the driver sees now. A lock starts when something blocks, ends when nothing does,
    /// and a different transition or view (another identity or kind) is a new lock.
    public func observe(_ observation: LockObservation) {
        guard observation.isLocked else {
            if current != nil { watchdog.end() }
            current = nil
            return
        }
        if let current, current.identity != observation.identity || current.transition != observation.transition
            || current.disabledView != observation.disabledView {
            watchdog.end()
        }
        watchdog.screen = observation.screen
        watchdog.begin(flags: observation.flags)
        current = observation
    }

    /// One check (the agent's tick calls it).
    public func tick() {
        watchdog.tick()
    }
}
