import Locking

/// An app's settings read from the store and kept in memory for the ingest path (admission,
/// attestation): read again once older than `maximumSeconds`, so a change saved on another node
/// applies here within that time. When the store cannot be read, the last settings read are
/// kept — never the defaults, which would let a `require` app take unattested uploads after a
/// database blip.
final class KeptSettings<Value: Sendable>: Sendable {
    private let entries = Locked<[String: (value: Value, readAt: CacheAge)]>([:])
    /// Seconds a read is kept (tests give 0).
    let maximumSeconds: UInt64
    private let defaults: Value

    init(maximumSeconds: UInt64, defaults: Value) {
        self.maximumSeconds = maximumSeconds
        self.defaults = defaults
    }

    /// The app's settings: kept, or `read` (nil: none stored, the defaults).
    func value(app: String, read: (String) throws -> Value?) -> Value {
        let now = CacheAge.now
        let cached = entries.withLock { $0[app] }
        if let cached, cached.readAt.isFresh(at: now.readAt, maximumSeconds: maximumSeconds) { return cached.value }
        let value: Value
        do {
            value = try read(app) ?? defaults
        } catch {
            return cached?.value ?? defaults
        }
        keep(value, app: app, readAt: now)
        return value
    }

    /// Keeps `value` as the app's settings read at `readAt` (a save keeps what it saved).
    func keep(_ value: Value, app: String, readAt: CacheAge = .now) {
        entries.withLock { entries in
            // Apps are made by admins: a handful. A bound all the same.
            if entries.count > 10_000 { entries.removeAll() }
            entries[app] = (value, readAt)
        }
    }
}
