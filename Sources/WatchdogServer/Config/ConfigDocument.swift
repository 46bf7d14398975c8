import Foundation
import WatchdogStore
import WatchdogWire

/// An app's remote-config document: defaults, and an ordered list of rules that overlay them
/// for the clients they match. Stored as `{"defaults": {...}, "rules": [...]}` with its
/// version beside it.
struct ConfigDocument: Equatable, Sendable {
    var version: Int
    var defaults: [String: JSONValue]
    var rules: [ConfigRule]
    var updatedAt: Int64?
    var updatedBy: String?

    static let maximumRules = 64

    static func initial() -> ConfigDocument {
        ConfigDocument(version: 0, defaults: [:], rules: [], updatedAt: nil, updatedBy: nil)
    }

    /// A stored document. Stored documents were validated when saved.
    init(record: ConfigRecord) {
        let parsed = (JSONValue.parse(Array(record.document.utf8))).flatMap { try? ConfigDocumentReader.document(from: $0) }
        self.init(version: record.version, defaults: parsed?.defaults ?? [:], rules: parsed?.rules ?? [], updatedAt: record.updatedAt, updatedBy: record.updatedBy)
    }

    init(version: Int, defaults: [String: JSONValue], rules: [ConfigRule], updatedAt: Int64?, updatedBy: String?) {
        self.version = version
        self.defaults = defaults
        self.rules = rules
        self.updatedAt = updatedAt
        self.updatedBy = updatedBy
    }

    /// The content (what versions differ by), as stored.
    var content: JSONValue {
        .object(["defaults": .object(defaults), "rules": .array(rules.map(\.json))])
    }

    var storedJSON: String {
        (try? JSONBody.encode(content)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// What `GET /v1/admin/apps/{app}/config` shows.
    var adminView: JSONValue {
        guard case .object(var fields) = content else { return content }
        fields["version"] = .number(Double(version))
        fields["updated_at"] = updatedAt.map { .string(Timestamp.format(milliseconds: $0)) } ?? .null
        fields["updated_by"] = updatedBy.map { .string($0) } ?? .null
        return .object(fields)
    }

    /// The document's ETag for `If-Match`.
    var etag: String { "\"cfg-\(version)\"" }
}

/// Reads and checks documents and rules; every error names the path of the offending value
/// (`rules[2].match.percent must be a number from 0 to 100, got 150`).
enum ConfigDocumentReader {
    static let documentFields: Set<String> = ["defaults", "rules", "version", "updated_at", "updated_by"]

    /// A whole document (`PUT`). `version`, `updated_at` and `updated_by` — what `GET` shows —
    /// are allowed and ignored.
    static func document(from value: JSONValue) throws(APIError) -> (defaults: [String: JSONValue], rules: [ConfigRule]) {
        guard case .object(let fields) = value else {
            throw .badRequest("invalid_shape", "the config document must be an object {\"defaults\": {...}, \"rules\": [...]}")
        }
        for key in fields.keys.sorted() where !documentFields.contains(key) {
            throw .badRequest("unknown_config_key", "\(key) is not a field of the config document; fields: defaults, rules")
        }
        try checkShownFields(fields)
        return (try defaults(fields["defaults"] ?? .object([:]), path: "defaults"), try rules(fields["rules"] ?? .array([]), path: "rules"))
    }

    /// `version`, `updated_at` and `updated_by` are ignored, but only as `GET` shows them: a
    /// document that gives them another type is not one the server wrote (OpenAPI says their types).
    static func checkShownFields(_ fields: [String: JSONValue]) throws(APIError) {
        switch fields["version"] {
        case nil: break
        case .number(let number)? where number >= 0 && number == number.rounded() && number <= 9_007_199_254_740_992: break
        case let value?: throw .badRequest("invalid_config_value", "version, when sent, must be the whole number GET shows, got \(value.typeName)")
        }
        switch fields["updated_at"] {
        case nil, .null?: break
        case .string(let text)? where Timestamp.parseMilliseconds(text) != nil: break
        case let value?: throw .badRequest("invalid_config_value", "updated_at, when sent, must be the RFC 3339 time or null GET shows, got \(value.typeName)")
        }
        switch fields["updated_by"] {
        case nil, .null?, .string?: break
        case let value?: throw .badRequest("invalid_config_value", "updated_by, when sent, must be the text or null GET shows, got \(value.typeName)")
        }
    }

    static func defaults(_ value: JSONValue, path: String) throws(APIError) -> [String: JSONValue] {
        guard case .object(let values) = value else { throw .badRequest("invalid_config_value", "\(path) must be an object of config keys") }
        for key in values.keys.sorted() where values[key] != .null {
            try ConfigSchema.check(key, values[key]!, path: "\(path).\(key)")
        }
        return values.filter { $0.value != .null }
    }

    static func rules(_ value: JSONValue, path: String) throws(APIError) -> [ConfigRule] {
        guard case .array(let items) = value else { throw .badRequest("invalid_config_value", "\(path) must be an array of rules") }
        guard items.count <= ConfigDocument.maximumRules else {
            throw .badRequest("invalid_config_value", "\(path) has \(items.count) rules; at most \(ConfigDocument.maximumRules)")
        }
        var rules: [ConfigRule] = []
        var ids = Set<String>()
        for (index, item) in items.enumerated() {
            let rule = try self.rule(item, path: "\(path)[\(index)]")
            guard ids.insert(rule.id).inserted else {
                throw .badRequest("invalid_config_value", "\(path)[\(index)].id \"\(rule.id)\" is used by another rule; rule ids must be unique (give rules distinct names or ids)")
            }
            rules.append(rule)
        }
        return rules
    }

    static let ruleFields: Set<String> = ["id", "name", "match", "set"]
    static let matchFields: Set<String> = ["versions", "builds", "channels", "idioms", "percent"]

    static func rule(_ value: JSONValue, path: String) throws(APIError) -> ConfigRule {
        guard case .object(let fields) = value else { throw .badRequest("invalid_config_value", "\(path) must be an object {\"id\", \"name\", \"match\", \"set\"}") }
        for key in fields.keys.sorted() where !ruleFields.contains(key) {
            throw .badRequest("invalid_config_value", "\(path).\(key) is not a rule field; fields: id, name, match, set")
        }
        let id: String
        switch fields["id"] {
        case nil, .null?:
            // The id salts the percentage cohort, so a rule sent without one gets one derived
            // from its name (or, nameless, its match and set): the same rule sent again — or a
            // dry run and then the real change — keeps the same cohort, and raising `percent`
            // only adds installs.
            let basis: JSONValue
            if case .string(let name)? = fields["name"] { basis = .string(name) } else {
                basis = .object(["match": fields["match"] ?? .null, "set": fields["set"] ?? .null])
            }
            id = "r_" + String(FNV1a64.hex((try? JSONBody.encode(basis)) ?? []).prefix(8))
        case .string(let text)?:
            guard !text.isEmpty, text.utf8.count <= 64, text.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 122) || ($0 >= 65 && $0 <= 90) || $0 == 95 || $0 == 45 }) else {
                throw .badRequest("invalid_config_value", "\(path).id must be 1–64 characters of A-Z a-z 0-9 _ -, got \(JSONValue.string(text).brief)")
            }
            id = text
        case let other?:
            throw .badRequest("invalid_config_value", "\(path).id must be a string, got \(other.typeName)")
        }
        var name = id
        if let given = fields["name"], given != .null {
            guard case .string(let text) = given, text.unicodeScalars.count <= 128 else {
                throw .badRequest("invalid_config_value", "\(path).name must be a string of at most 128 characters")
            }
            name = text
        }
        let match = try self.match(fields["match"] ?? .object([:]), path: "\(path).match")
        guard case .object(let values)? = fields["set"], !values.isEmpty else {
            throw .badRequest("invalid_config_value", "\(path).set must be a non-empty object of config keys, e.g. {\"test_crash\": true}")
        }
        // A rule sets every key it names (openapi.yaml, ConfigRuleValues): a key it does not
        // set is left out, not null — a set of nulls alone would be a rule that sets nothing.
        if let key = values.first(where: { $0.value == .null })?.key {
            throw .badRequest("invalid_config_value", "\(path).set.\(key) must not be null: leave a key the rule does not set out of set")
        }
        for key in values.keys.sorted() {
            try ConfigSchema.check(key, values[key]!, path: "\(path).set.\(key)")
        }
        return ConfigRule(id: id, name: name, match: match, set: values)
    }

    static func match(_ value: JSONValue, path: String) throws(APIError) -> RuleMatch {
        guard case .object(let fields) = value else { throw .badRequest("invalid_config_value", "\(path) must be an object") }
        for key in fields.keys.sorted() where !matchFields.contains(key) {
            throw .badRequest("invalid_config_value", "\(path).\(key) is not a match field; fields: versions, builds, channels, idioms, percent")
        }
        var match = RuleMatch()
        switch fields["versions"] {
        case nil, .null?: break
        case .string(let text)?:
            switch VersionRange.parse(text) {
            case .success(let range): match.versions = range
            case .failure(let invalid): throw .badRequest("invalid_config_value", "\(path).versions \(invalid.reason)")
            }
        case let other?:
            throw .badRequest("invalid_config_value", "\(path).versions must be a string such as \">=14.2.0 <15\", got \(other.typeName)")
        }
        match.builds = try strings(fields["builds"], path: "\(path).builds", limit: Limits.versionLength)
        match.channels = try strings(fields["channels"], path: "\(path).channels", limit: Limits.channelLength)
        match.idioms = try strings(fields["idioms"], path: "\(path).idioms", limit: 16)
        for (index, idiom) in match.idioms.enumerated() where !Vocabulary.idioms.contains(idiom) {
            throw .badRequest("invalid_config_value", "\(path).idioms[\(index)] must be one of \(Vocabulary.idioms.sorted().joined(separator: ", ")), got \(JSONValue.string(idiom).brief)")
        }
        switch fields["percent"] {
        case nil, .null?: break
        case .number(let percent)? where percent.isFinite && percent >= 0 && percent <= 100: match.percent = percent
        case let other?:
            throw .badRequest("invalid_config_value", "\(path).percent must be a number from 0 to 100, got \(other.brief)")
        }
        return match
    }

    private static func strings(_ value: JSONValue?, path: String, limit: Int) throws(APIError) -> [String] {
        guard let value, value != .null else { return [] }
        guard case .array(let items) = value, items.count <= 256 else {
            throw .badRequest("invalid_config_value", "\(path) must be an array of at most 256 strings")
        }
        var strings: [String] = []
        for (index, item) in items.enumerated() {
            guard case .string(let text) = item, !text.isEmpty, text.unicodeScalars.count <= limit else {
                throw .badRequest("invalid_config_value", "\(path)[\(index)] must be a non-empty string of at most \(limit) characters")
            }
            strings.append(text)
        }
        return strings
    }
}
