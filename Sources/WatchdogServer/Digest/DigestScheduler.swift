import Foundation
import Logging
import WatchdogStore

/// Queues each digest hook's weekly digest once the week is over: on the alerts' own thread
/// (`AlertService`), never on a request's or ingest's. The week is recorded with the queued
/// delivery in one transaction (`queueAlertDigest`), so a restart neither skips a week nor
/// sends it twice, and on several nodes one queues it. Delivery is the outbox's: retries for
/// 24 h, the 4 KiB / timeout limits, the hook's own worker.
struct DigestScheduler: Sendable {
    let store: any TelemetryStore
    let digest: WeeklyDigest
    let clock: @Sendable () -> Int64
    let logger: Logger

    /// Queues the last complete week's digest for every digest hook that has not had it;
    /// how many were queued.
    @discardableResult
    func queueDue() throws -> Int {
        let now = clock()
        let span = WeeklyDigest.Span.lastCompleteWeek(now: now)
        var queued = 0
        for app in try store.apps().map(\.app) {
            for hook in try store.alertHooks(app: app) where hook.digest && (HookKind(rawValue: hook.kind)?.takesDigest ?? false) {
                guard try store.alertDigestWeek(hookID: hook.id) != span.label else { continue }
                do {
                    let delivery = try digest.delivery(app: app, span: span, hook: hook, now: now, manual: false)
                    if try store.queueAlertDigest(delivery, week: span.label) { queued += 1 }
                } catch let error as APIError {
                    logger.warning("digest of \(app) for hook \(hook.id) not built: \(error.message)")
                }
            }
        }
        return queued
    }

    /// A digest of the last 7 days to `hook` now (`POST …/alerts/hooks/{id}/digest`,
    /// `watchdogd alerts digest APP --now`): queued apart from the weekly one, which it does
    /// not count as sent.
    func queueNow(hook: AlertHookRecord) throws(APIError) -> (delivery: AlertDeliveryRecord, row: Int64) {
        let now = clock()
        let delivery = try digest.delivery(app: hook.app, span: .lastSevenDays(now: now), hook: hook, now: now, manual: true)
        let row = try storeCall { try store.enqueueAlertDelivery(delivery) }
        return (delivery, row)
    }
}
