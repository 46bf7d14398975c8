import Foundation
import WatchdogWire

/// Watches for user interaction left blocked, as a navigation controller does while a push or
/// pop runs (`beginIgnoringInteractionEvents`). A lock held longer than `lock_threshold_s` is
/// reported once, with its flags and duration, and the recovery hook is called.
///
/// Not thread-safe: drive it from one thread.
public final class InteractionLockWatchdog {
    /// The remote config in force (`lock_threshold_s`, `enabled`, …).
    public var config = WatchdogConfig()
    /// Time in the background does not count as blocked interaction.
    public var appState: AppState = .active {
        didSet {
            guard oldValue != appState else { return }
            if oldValue == .active, let since = lockedSince {
                heldBeforePause += clock() - since
                lockedSince = nil
                paused = true
            } else if appState == .active, paused {
                lockedSince = clock()
                paused = false
            }
        }
    }
    private var heldBeforePause = 0.0
    private var paused = false
    /// Who reports: app, release, device, install and session.
    public var context: ReportContext
    /// The screen a report names, if the host tells.
    public var screen: String?
    /// Called when a lock passes the threshold, e.g. to re-enable interaction.
    public var recover: (([String: Bool]) -> Void)?

    private var lockedSince: Double?
    private var flags: [String: Bool] = [:]
    private var reported = false
    private let sink: ReportSink
    private let logger: TaggedLogger
    private let clock: () -> Double
    private let wallClock: () -> Date

    /// - Parameters:
    ///   - context: who reports.
    ///   - sink: where reports are written (the outbox).
    ///   - logger: the lock log lines go under its `lock` child.
    ///   - clock: monotonic seconds, for durations.
    ///   - wallClock: the time a report's `occurred_at` says.
    public init(context: ReportContext, sink: ReportSink, logger: TaggedLogger, clock: @escaping () -> Double, wallClock: @escaping () -> Date = Date.init) {
        self.context = context
        self.sink = sink
        self.logger = logger.child("lock")
        self.clock = clock
        self.wallClock = wallClock
    }

    /// Interaction became blocked (or its flags changed while blocked).
    public func begin(flags: [String: Bool]) {
        if lockedSince == nil, !paused {
            lockedSince = clock()
            heldBeforePause = 0
            reported = false
            logger.log("blockAllInteraction: begin ignoring interaction events")
        }
        self.flags.merge(flags) { _, new in new }
    }

    /// Interaction is possible again.
    public func end() {
        guard lockedSince != nil || paused else { return }
        logger.log(String(format: "restoreAllInteraction: unblocked after %.1f s", heldFor))
        check()
        lockedSince = nil
        paused = false
        heldBeforePause = 0
        flags = [:]
    }

    /// Whether a lock is held (also while paused in the background).
    public var isLocked: Bool { lockedSince != nil || paused }

    /// Seconds the current lock has held while the app was active.
    private var heldFor: Double { heldBeforePause + (lockedSince.map { clock() - $0 } ?? 0) }

    /// One check; call it with the layout watchdog's tick.
    public func tick() {
        check()
    }

    private func check() {
        guard config.enabled, lockedSince != nil, !reported else { return }
        let duration = heldFor
        guard duration > config.lockThresholdS else { return }
        reported = true
        logger.log(String(format: "interaction blocked for %.1f s", duration))
        var report = Report(
            id: TimeOrderedID.make(), kind: "interaction_lock", occurredAt: rfc3339(wallClock()), app: context.app,
            release: context.release, device: context.device, sessionId: context.sessionID, installId: context.installID,
            appState: appState.rawValue, screen: screen
        )
        report.lock = InteractionLock(durationS: duration, flags: flags)
        report.logs = logger.recentLines()
        sink.enqueue(report)
        recover?(flags)
    }
}
