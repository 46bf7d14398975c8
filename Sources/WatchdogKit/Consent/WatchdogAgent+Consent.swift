import Foundation

extension WatchdogAgent {
    /// Whether the tester lets WatchdogKit collect: `false` stops checks, writes and uploads
    /// (config fetches too), whatever the remote config says, from the next tick. The choice is
    /// kept in the storage directory and survives restarts; before it is made,
    /// `WatchdogSettings.collectsByDefault` holds. Turning it back on starts a new session.
    /// What is already waiting stays unless `deleteUnsentData()` removes it.
    public var isCollectionEnabled: Bool {
        get { consent.isEnabled }
        set {
            let was = consent.isEnabled
            consent.set(newValue)
            applyConfig()
            logger.log("collection \(newValue ? "enabled" : "disabled") by the app")
            if newValue, !was {
                startSession()
            } else if !newValue {
                sessionStarted = false
                pendingSessionStart = nil
            }
        }
    }

    /// Deletes everything not yet sent: the outbox's reports and session starts, the quarantine,
    /// drop counts not yet sent, writes waiting for a retry, the buffered log lines, and the App
    /// Attest key's state (a new key is attested next time). A batch already on its way may
    /// still arrive.
    public func deleteUnsentData() {
        let outbox = outbox
        writer.discardAll { outbox.removeAll() }
        attester?.reset()
        logger.clear()
        logger.log("unsent data deleted by the app")
    }

    /// Protected data became available (`UIApplication.protectedDataDidBecomeAvailableNotification`,
    /// the first unlock after a reboot): what could not be read at launch — the install id, the
    /// tester's choice, the cached config, the App Attest state — is read now, a session asked
    /// for meanwhile is saved with its start time, and held writes are retried. Each tick tries
    /// too while the install id is missing.
    public func protectedDataDidBecomeAvailable() {
        if installID == nil, let id = settings.installID ?? InstallIdentity.resolve(in: settings.storageDirectory) {
            resolveInstallID(id)
        }
        if consent.enabled == nil { consent.reload() }
        writer.retryPending()
        applyConfig()
        if let started = pendingSessionStart, installID != nil, let enabled = consent.enabled {
            if enabled && config.current.enabled {
                startSession(at: started)
            } else {
                pendingSessionStart = nil
            }
        }
    }

    private func resolveInstallID(_ id: String) {
        installID = id
        var context = layout.context
        context.installID = id
        for scene in scenes { scene.setContext(context) }
        locks.context = context
        config.setInstallID(id)
        config.reloadCache()
        attester?.setInstallID(id)
        logger.log("install id read once protected data became available")
    }
}
