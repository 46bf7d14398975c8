import Foundation
import Synchronization
import WatchdogStore
import WatchdogWire

/// Serves effective configs from memory and applies admin changes.
///
/// The effective config of an app is computed once per change (and once when a
/// `test_crash_expires_at` passes), kept as ready-to-send bytes with its ETag, so
/// `GET /v1/config` costs a dictionary lookup.
final class ConfigService: Sendable {
    /// Ready-to-send effective config.
    struct Effective: Sendable {
        var body: [UInt8]
        var etag: String
        /// When this computed result stops being right (a `test_crash_expires_at` passing).
        var validUntil: Int64
    }

    private struct State {
        var documents: [String: ConfigDocument] = [:]
        var effective: [String: Effective] = [:]
    }

    private let store: any TelemetryStore
    private let clock: @Sendable () -> Int64
    private let state = Mutex(State())
    /// Serializes read-modify-write of documents so concurrent PATCHes don't conflict spuriously.
    private let changeLock = Mutex(())

    init(store: any TelemetryStore, clock: @escaping @Sendable () -> Int64) throws {
        self.store = store
        self.clock = clock
        let records = try store.configDocuments()
        state.withLock { state in
            for record in records { state.documents[record.app] = ConfigDocument(record: record) }
        }
    }

    /// The effective config for a client of `app`, or `nil` for an unknown app.
    func effective(app: String) throws -> Effective? {
        let now = clock()
        if let cached = state.withLock({ $0.effective[app] }), now < cached.validUntil { return cached }
        let document: ConfigDocument
        if let known = state.withLock({ $0.documents[app] }) {
            document = known
        } else {
            guard try store.appExists(app) else { return nil }
            document = .initial()
        }
        let computed = Self.compute(document, now: now)
        state.withLock { state in
            if state.documents[app] == nil || state.documents[app]?.version == document.version {
                state.effective[app] = computed
            }
        }
        return computed
    }

    /// The admin document of `app`, or `nil` for an unknown app.
    func document(app: String) throws -> ConfigDocument? {
        if let known = state.withLock({ $0.documents[app] }) { return known }
        return try store.appExists(app) ? .initial() : nil
    }

    /// Applies a merge patch (SPEC §4): top-level config keys change `defaults`; `defaults` and
    /// `rules` address the document itself.
    func patch(app: String, patch: JSONValue, ifMatch: String?, actor: String) throws -> ConfigDocument {
        try changeLock.withLock { _ in
            guard var document = try self.document(app: app) else {
                throw APIError.notFound("no app \(app); create it with POST /v1/admin/apps")
            }
            if let ifMatch, !Self.matches(ifMatch, etag: document.etag) {
                throw APIError(status: 409, code: "stale_config",
                               message: "If-Match \(ifMatch) is not the current version \(document.etag); GET the config and apply your change again",
                               headers: [("ETag", document.etag)])
            }
            guard case .object(let fields) = patch else {
                throw APIError.badRequest("invalid_shape", "the body must be a JSON object, e.g. {\"test_crash\": true}")
            }
            let before = document
            var defaultsPatch: [String: JSONValue] = [:]
            for (key, value) in fields {
                switch key {
                case "defaults":
                    switch value {
                    case .object(let inner): defaultsPatch.merge(inner) { _, new in new }
                    case .null: document.defaults = [:]
                    default: throw APIError.badRequest("invalid_config_value", "defaults must be an object of config keys, got \(value.typeName)")
                    }
                case "rules":
                    guard case .array(let rules) = value else {
                        throw APIError.badRequest("invalid_config_value", "rules must be an array, got \(value.typeName)")
                    }
                    guard rules.isEmpty else {
                        throw APIError.badRequest("unsupported_config", "rules are not supported by this server yet; only [] is accepted (set keys in defaults)")
                    }
                    document.rules = []
                case "version":
                    throw APIError.badRequest("invalid_config_value", "version is assigned by the server; send If-Match with the document's ETag to guard against concurrent changes")
                default:
                    defaultsPatch[key] = value
                }
            }
            for (key, value) in defaultsPatch {
                let path = fields[key] != nil ? key : "defaults.\(key)"
                if value == .null {
                    guard ConfigSchema.keyNames.contains(key) else { try ConfigSchema.check(key, value, path: path); continue }
                    document.defaults.removeValue(forKey: key)
                } else {
                    try ConfigSchema.check(key, value, path: path)
                    document.defaults[key] = value
                }
            }
            guard document.defaults != before.defaults || document.rules != before.rules else { return before }
            document.version = before.version + 1
            document.updatedAt = clock()
            document.updatedBy = actor
            do {
                try store.saveConfig(
                    ConfigRecord(app: app, version: document.version, document: document.storedJSON, updatedAt: document.updatedAt ?? 0, updatedBy: actor),
                    expectedVersion: before.version, before: before.version == 0 ? nil : before.storedJSON
                )
            } catch StoreError.conflict(let current) {
                throw APIError(status: 409, code: "stale_config", message: "the config changed meanwhile (now version \(current)); GET it and apply your change again")
            }
            let saved = document
            state.withLock { state in
                state.documents[app] = saved
                state.effective[app] = Self.compute(saved, now: clock())
            }
            return saved
        }
    }

    private static func compute(_ document: ConfigDocument, now: Int64) -> Effective {
        var fields: [String: JSONValue] = ["version": .number(Double(document.version))]
        for key in ConfigSchema.keys {
            fields[key.name] = document.defaults[key.name] ?? key.defaultValue ?? .null
        }
        var validUntil = Int64.max
        if case .string(let text) = fields["test_crash_expires_at"], let expiry = Timestamp.parseMilliseconds(text) {
            if now >= expiry { fields["test_crash"] = .bool(false) } else { validUntil = expiry }
        }
        let body = (try? JSONBody.encode(JSONValue.object(fields))) ?? Array("{}".utf8)
        return Effective(body: body, etag: "\"\(fnv1a(body))\"", validUntil: validUntil)
    }

    /// `If-Match` / `If-None-Match` list matching (RFC 9110 §13.1), weak comparison.
    static func matches(_ header: String, etag: String) -> Bool {
        let wanted = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        for candidate in header.split(separator: ",") {
            var tag = candidate.trimmingCharacters(in: " \t")
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if tag == wanted { return true }
        }
        return false
    }

    private static func fnv1a(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
