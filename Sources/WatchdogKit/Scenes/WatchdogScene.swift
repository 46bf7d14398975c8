import WatchdogWire

/// One window of the app as the agent watches it — one per window scene on iPad, where an app
/// can have several side by side or on an external display. Each has its own window frame,
/// keyboard geometry, lifecycle state, watched views and automatic lock detection; the agent's
/// outbox, install id, session, config and uploads are shared by all (one agent per app).
///
/// The UIKit driver attaches one per window (`WatchdogAgent.attachScene(window:)`) and says
/// how to tell which window holds the first responder and is key, and which screen it is on:
/// keyboard notifications reach every window of the app, and `KeyboardRouting` decides whose
/// keyboard each is.
///
/// Not thread-safe: drive it from one thread (the main thread in an app), through the agent.
public final class WatchdogScene {
    /// This window's layout watchdog: its keyboard geometry and watched views.
    public let layout: LayoutWatchdog
    /// Locks found without host calls in this window (`WatchdogAgent.observeLocks(_:in:)`).
    public let automaticLocks: AutomaticLockDetector
    /// The glue's identity of the window (its `ObjectIdentifier`'s hash): SwiftUI views find
    /// their scene by it (`WatchdogAgent.scene(forWindow:)`).
    public var windowID: Int?
    /// Whether this window's scene has the app's key window (asked when a keyboard notification
    /// arrives and no window holds the first responder).
    public var isKey: () -> Bool = { true }
    /// The identity of the screen this window is on (`nil`: unknown), compared with the
    /// keyboard's (`KeyboardEvent.screenID`).
    public var screenID: () -> Int? = { nil }
    /// Whether a driver feeds this scene now (between `attachScene` and `detachScene`).
    public internal(set) var isAttached = false

    init(layout: LayoutWatchdog, automaticLocks: AutomaticLockDetector) {
        self.layout = layout
        self.automaticLocks = automaticLocks
    }

    /// The scene's lifecycle state: its watchdogs judge only while `active`.
    public var appState: AppState { layout.appState }

    func setAppState(_ state: AppState) {
        layout.appState = state
        automaticLocks.watchdog.appState = state
    }

    func setContext(_ context: ReportContext) {
        layout.context = context
        automaticLocks.watchdog.context = context
    }

    func setConfig(_ config: WatchdogConfig) {
        layout.config = config
        automaticLocks.watchdog.config = config
    }

    /// What this window says about itself for `KeyboardRouting`: an unknown first responder
    /// (no `layout.firstResponder`) holds nothing.
    var routingWindow: KeyboardRouting.Window {
        let responder = layout.firstResponder?() ?? .none
        return KeyboardRouting.Window(holdsFirstResponder: responder != .none, isKey: isKey(), screenID: screenID())
    }
}

extension AppState {
    /// The app's state from its scenes': active if one is, else inactive if one is in front.
    static func of(_ states: [AppState]) -> AppState {
        if states.contains(.active) { return .active }
        return states.contains(.inactive) ? .inactive : .background
    }
}
