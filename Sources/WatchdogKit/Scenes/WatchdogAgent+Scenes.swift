import Foundation
import WatchdogWire

extension WatchdogAgent {
    /// A scene for a window a driver starts to feed: the main scene the first time, a new one
    /// for each further window (iPad: several windows of the app at once).
    public func attachScene(window: Frame) -> WatchdogScene {
        let scene: WatchdogScene
        if !mainScene.isAttached {
            scene = mainScene
            scene.layout.windowChanged(window)
        } else {
            scene = newScene(window: window)
            appendScene(scene)
        }
        scene.isAttached = true
        return scene
    }

    /// The window's scene is gone (its driver stopped): a further scene is removed; the main
    /// scene stays, in the background, for the next window.
    public func detachScene(_ scene: WatchdogScene) {
        scene.isAttached = false
        scene.windowID = nil
        if scene === mainScene {
            setAppState(.background, for: scene)
        } else {
            removeScene(scene)
            appStateChanged()
        }
    }

    /// `detachScene` for a driver that went away (its `deinit` holds only the scene's identity).
    func detachScene(identifiedBy id: ObjectIdentifier) {
        if let scene = scenes.first(where: { ObjectIdentifier($0) == id }) { detachScene(scene) }
    }

    /// The scene of the window with this identity (`WatchdogScene.windowID`), if a driver feeds it.
    public func scene(forWindow windowID: Int) -> WatchdogScene? {
        scenes.first { $0.isAttached && $0.windowID == windowID }
    }

    /// The app's lifecycle state, from its scenes': active if one is.
    public var appState: AppState { AppState.of(scenes.map(\.appState)) }

    /// Every scene's lifecycle state at once (an app with one window, tests).
    public func setAppState(_ state: AppState) {
        for scene in scenes { scene.setAppState(state) }
        appStateChanged()
    }

    /// One scene's lifecycle state: its watchdogs judge only while it is `active`. The app's
    /// state follows (a new session after `SessionPolicy.backgroundTimeout` in the background).
    public func setAppState(_ state: AppState, for scene: WatchdogScene) {
        scene.setAppState(state)
        appStateChanged()
    }

    func appStateChanged() {
        let state = appState
        locks.appState = state
        guard state != lastAppState else { return }
        lastAppState = state
        if sessionPolicy.appState(state, at: wallClock().timeIntervalSince1970) {
            logger.log("back in front after \(Int(SessionPolicy.backgroundTimeout)) s or more in the background: a new session")
            startSession()
        }
    }

    /// Starts a session (the denominator of the server's rates): a new session id on every
    /// report from now on, and a session start saved for upload. Nothing while the tester said
    /// no or the remote config is off; before the first unlock it is saved once the install id
    /// can be read, with the time it started.
    public func startSession() {
        applyConfig()
        guard consent.enabled != false, config.current.enabled else { return }
        guard installID != nil, consent.enabled != nil else {
            pendingSessionStart = pendingSessionStart ?? Date()
            return
        }
        startSession(at: Date())
    }

    /// Starts a session unless this process already has one (every driver's `start()` calls
    /// it: several windows make one session).
    public func startSessionIfNeeded() {
        guard !sessionStarted, pendingSessionStart == nil else { return }
        startSession()
    }

    func startSession(at date: Date) {
        guard let installID else { return }
        var context = layout.context
        context.installID = installID
        context.sessionID = TimeOrderedID.make()
        for scene in scenes { scene.setContext(context) }
        locks.context = context
        let session = SessionStart(id: context.sessionID, installId: installID,
                                   startedAt: Timestamp.format(milliseconds: Int64(date.timeIntervalSince1970 * 1000)),
                                   app: context.app, release: context.release, device: context.device)
        writer.enqueue(session)
        sessionStarted = true
        pendingSessionStart = nil
        sync()
    }

    /// A keyboard notification, as the main scene's driver hears it (this app's or, with
    /// `isLocal == false`, another app's: ignored).
    public func keyboardEvent(_ event: KeyboardEvent) {
        keyboardEvent(event, in: mainScene)
    }

    /// A keyboard notification as `scene`'s driver hears it: every window of the app hears every
    /// keyboard notification, and `KeyboardRouting` decides whose it is for this one. While the
    /// agent is not collecting, or the scene is in the background, no window is asked for its
    /// first responder (no view-tree walk): the key window's scene keeps the geometry.
    public func keyboardEvent(_ event: KeyboardEvent, in scene: WatchdogScene) {
        let others = scenes.filter { $0 !== scene && $0.isAttached }
        let owner: KeyboardOwner
        if others.isEmpty {
            owner = KeyboardRouting.owner(of: event, for: KeyboardRouting.Window(holdsFirstResponder: true, isKey: true, screenID: scene.screenID()), others: [])
        } else if !isCollecting || scene.appState == .background {
            owner = KeyboardRouting.owner(of: event, for: KeyboardRouting.Window(holdsFirstResponder: scene.isKey(), isKey: scene.isKey(), screenID: scene.screenID()),
                                          others: others.map { KeyboardRouting.Window(holdsFirstResponder: false, isKey: $0.isKey(), screenID: $0.screenID()) })
        } else {
            owner = KeyboardRouting.owner(of: event, for: scene.routingWindow, others: others.map(\.routingWindow))
        }
        scene.layout.keyboardEvent(event, owner: owner)
    }

    /// The main window moved or resized (screen coordinates): the keyboard geometry is
    /// re-evaluated without waiting for a keyboard notification.
    public func windowChanged(_ frame: Frame, animationDuration: Double = 0) {
        mainScene.layout.windowChanged(frame, animationDuration: animationDuration)
    }

    /// What can block interaction now in the main scene, as the UIKit driver sees it before each
    /// tick (or a test, or another platform's glue): see `AutomaticLockDetector`.
    public func observeLocks(_ observation: LockObservation) {
        guard isCollecting else { return }
        mainScene.automaticLocks.observe(observation)
    }
}
