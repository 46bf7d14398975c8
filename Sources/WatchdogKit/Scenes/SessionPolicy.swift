/// When a new session starts: at launch, and when the app comes back to the foreground after
/// `backgroundTimeout` seconds or more in the background (all its scenes there) — the rule
/// Sentry's release health follows, so "per session" reads the same in both. A shorter trip to
/// the background (a glance at a notification, the app switcher) stays the same session. The
/// server is unchanged: a session start is a session start.
public struct SessionPolicy: Sendable, Equatable {
    /// Seconds in the background after which coming back is a new session.
    public static let backgroundTimeout: Double = 30

    /// When the app went to the background, in seconds of the time of day — not the monotonic
    /// clock, which stops while the device sleeps (`nil`: the app is in front).
    public private(set) var backgroundSince: Double?
    /// Whether coming back to `active` starts a new session.
    public private(set) var newSessionOnActive = false

    /// A policy for an app in front.
    public init() {}

    /// The app's state (from its scenes') is now `state`, at `now`: returns whether a new
    /// session starts now.
    public mutating func appState(_ state: AppState, at now: Double) -> Bool {
        switch state {
        case .background:
            if backgroundSince == nil { backgroundSince = now }
            return false
        case .inactive:
            leaveBackground(at: now)
            return false
        case .active:
            leaveBackground(at: now)
            defer { newSessionOnActive = false }
            return newSessionOnActive
        }
    }

    private mutating func leaveBackground(at now: Double) {
        guard let since = backgroundSince else { return }
        backgroundSince = nil
        if now - since >= Self.backgroundTimeout { newSessionOnActive = true }
    }
}
