import Dispatch
import Foundation
import Locking
import WatchdogStore

/// Each app's `AdmissionSettings`, read from the store once and kept in memory for the ingest
/// path; an entry older than `maximumAgeSeconds` is read again, so a change saved on another
/// node (PostgreSQL) applies here within that time.
final class AdmissionService: Sendable {
    let store: any TelemetryStore
    private let kept: KeptSettings<AdmissionSettings>
    static let maximumAgeSeconds: UInt64 = 10

    /// - Parameter cacheSeconds: seconds a settings read is kept (`maximumAgeSeconds`; tests give 0).
    init(store: any TelemetryStore, cacheSeconds: UInt64 = maximumAgeSeconds) {
        self.store = store
        kept = KeptSettings(maximumSeconds: cacheSeconds, defaults: AdmissionSettings())
    }

    /// The app's settings (the defaults when none are stored). When the store cannot be read,
    /// the last settings read are kept, not replaced by the defaults.
    func settings(app: String) -> AdmissionSettings {
        kept.value(app: app) { app in try store.admissionSettings(app: app).flatMap(AdmissionSettings.decoded) }
    }

    /// Checks and saves an app's settings; they apply to the next request.
    func save(app: String, _ settings: AdmissionSettings) throws(APIError) {
        try settings.validate()
        // The audit row: the stored settings before (`null`: the defaults) and after.
        AuditNote.set(beforeJSON: (try? store.admissionSettings(app: app)) ?? nil, afterJSON: settings.json)
        do {
            try store.saveAdmissionSettings(app: app, json: settings.json)
        } catch StoreError.unknownApp {
            throw .notFound("app \(app) does not exist")
        } catch {
            throw .unavailable("the store could not save the settings; retry later")
        }
        kept.keep(settings, app: app)
    }

    /// What the server adds to a session start before the store sees it: the network it came
    /// from, the app's policy, and the `far_from_arrival` mark.
    func prepare(_ session: inout SessionRecord, network: String?, settings: AdmissionSettings, now: Int64) {
        session.network = network
        session.policy = settings.policy
        let tooOld = settings.maximumSessionAgeHours > 0 && session.startedAt < now - Int64(settings.maximumSessionAgeHours) * 3_600_000
        let ahead = settings.maximumSessionAgeHours > 0 && session.startedAt > now + AdmissionSettings.sessionStartMaximumAheadMilliseconds
        if tooOld || ahead {
            session.marks.insert(.farFromArrival)
        }
    }
}
