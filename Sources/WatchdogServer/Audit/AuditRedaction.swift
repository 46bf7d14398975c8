/// What an audit row may hold: JSON with every secret taken out — token values and hashes,
/// webhook signing secrets, sign-in codes and links, session and CSRF tokens — and webhook
/// URLs cut to their scheme and host (a Slack or Teams hook's path is its credential).
enum AuditRedaction {
    /// Keys whose values are secrets, wherever they appear.
    static let secretKeys: Set<String> = [
        "token", "ingest_key", "secret", "secret_hash", "code", "path", "csrf_token", "password", "authorization", "cookie",
        "routing_key",
    ]

    /// The value with its secrets replaced by `"[redacted]"`.
    static func redacted(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members):
            var clean: [String: JSONValue] = [:]
            for (key, member) in members {
                if secretKeys.contains(key.lowercased()) {
                    clean[key] = .string("[redacted]")
                } else if key == "url", case .string(let url) = member {
                    clean[key] = .string(origin(of: url))
                } else {
                    clean[key] = redacted(member)
                }
            }
            return .object(clean)
        case .array(let elements):
            return .array(elements.map(redacted))
        default:
            return value
        }
    }

    /// `scheme://host[:port]` of a URL (what is before the third slash).
    static func origin(of url: String) -> String {
        let parts = url.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count >= 3 else { return "[redacted]" }
        let host = parts[2].split(separator: "@").last.map(String.init) ?? ""
        return "\(parts[0])//\(host)"
    }

    /// The redacted value as JSON text.
    static func text(_ value: JSONValue) -> String {
        let bytes = (try? JSONBody.encode(redacted(value))) ?? Array("null".utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// JSON text as a value (text that is not JSON becomes a string).
    static func value(_ json: String) -> JSONValue {
        JSONValue.parse(Array(json.utf8)) ?? .string(json)
    }
}
