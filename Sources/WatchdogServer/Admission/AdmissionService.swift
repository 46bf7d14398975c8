import Dispatch
import Foundation
import Locking
import WatchdogStore

/// Each app's `AdmissionSettings`, read from the store once and kept in memory for the ingest
/// path; an entry older than `maximumAgeSeconds` is read again, so a change saved on another
/// node (PostgreSQL) applies here within that time.
final class AdmissionService: Sendable {
    private struct Entry {
        var settings: AdmissionSettings
        var readAt: CacheAge
    }

    let store: any TelemetryStore
    private let entries = Locked<[String: Entry]>([:])
    static let maximumAgeSeconds: UInt64 = 10

    /// Seconds a settings read is kept (`maximumAgeSeconds`; tests give 0).
    let cacheSeconds: UInt64

    init(store: any TelemetryStore, cacheSeconds: UInt64 = maximumAgeSeconds) {
        self.store = store
        self.cacheSeconds = cacheSeconds
    }

    /// The app's settings (the defaults when none are stored). When the store cannot be read,
    /// the last settings read are kept, not replaced by the defaults.
    func settings(app: String) -> AdmissionSettings {
        let now = CacheAge.now
        let cached = entries.withLock { $0[app] }
        if let cached, cached.readAt.isFresh(at: now.readAt, maximumSeconds: cacheSeconds) { return cached.settings }
        let stored: String?
        do {
            stored = try store.admissionSettings(app: app)
        } catch {
            return cached?.settings ?? AdmissionSettings()
        }
        let settings = stored.flatMap(AdmissionSettings.decoded) ?? AdmissionSettings()
        entries.withLock { entries in
            // Apps are made by admins: a handful. A bound all the same.
            if entries.count > 10_000 { entries.removeAll() }
            entries[app] = Entry(settings: settings, readAt: now)
        }
        return settings
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
        entries.withLock { $0[app] = Entry(settings: settings, readAt: CacheAge.now) }
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
