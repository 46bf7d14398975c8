import Foundation
import WatchdogStore
import WatchdogWire

/// An app's remote-config document: defaults, and rules that later overlay them.
///
/// Stored as `{"defaults": {...}, "rules": [...]}` with its version beside it, so rules,
/// rollout and history extend this without a migration of the stored shape.
struct ConfigDocument: Equatable, Sendable {
    var version: Int
    var defaults: [String: JSONValue]
    var rules: [JSONValue]
    var updatedAt: Int64?
    var updatedBy: String?

    static func initial() -> ConfigDocument {
        ConfigDocument(version: 0, defaults: [:], rules: [], updatedAt: nil, updatedBy: nil)
    }

    init(version: Int, defaults: [String: JSONValue], rules: [JSONValue], updatedAt: Int64?, updatedBy: String?) {
        self.version = version
        self.defaults = defaults
        self.rules = rules
        self.updatedAt = updatedAt
        self.updatedBy = updatedBy
    }

    init(record: ConfigRecord) {
        let stored = JSONValue.parse(Array(record.document.utf8))
        var defaults: [String: JSONValue] = [:]
        var rules: [JSONValue] = []
        if case .object(let fields) = stored {
            if case .object(let storedDefaults) = fields["defaults"] { defaults = storedDefaults }
            if case .array(let storedRules) = fields["rules"] { rules = storedRules }
        }
        self.init(version: record.version, defaults: defaults, rules: rules, updatedAt: record.updatedAt, updatedBy: record.updatedBy)
    }

    /// The stored form (without version).
    var storedJSON: String {
        let value = JSONValue.object(["defaults": .object(defaults), "rules": .array(rules)])
        return (try? JSONBody.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// What `GET /v1/admin/apps/{app}/config` shows.
    var adminView: JSONValue {
        var fields: [String: JSONValue] = [
            "version": .number(Double(version)),
            "defaults": .object(defaults),
            "rules": .array(rules),
        ]
        fields["updated_at"] = updatedAt.map { .string(Timestamp.format(milliseconds: $0)) } ?? .null
        fields["updated_by"] = updatedBy.map { .string($0) } ?? .null
        return .object(fields)
    }

    /// The document's ETag for `If-Match`.
    var etag: String { "\"cfg-\(version)\"" }
}
