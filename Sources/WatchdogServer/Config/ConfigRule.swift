import WatchdogStore
import WatchdogWire

/// One rule of an app's config: which clients it matches and the keys it sets for them.
///
/// ```json
/// {"id": "r1", "name": "crash 5 % of beta testers on 14.2",
///  "match": {"versions": ">=14.2.0 <15", "builds": [], "channels": ["beta"], "idioms": [], "percent": 5},
///  "set": {"test_crash": true}}
/// ```
struct ConfigRule: Equatable, Sendable {
    /// Stable identity; also the salt of the percentage cohort, so two rules pick different
    /// installs and a rule keeps its cohort when renamed or moved.
    var id: String
    var name: String
    var match: RuleMatch
    var set: [String: JSONValue]

    var json: JSONValue {
        .object(["id": .string(id), "name": .string(name), "match": match.json, "set": .object(set)])
    }
}

/// What a client must be for a rule to apply. Empty lists match everything.
struct RuleMatch: Equatable, Sendable {
    var versions: VersionRange?
    var builds: [String] = []
    var channels: [String] = []
    var idioms: [String] = []
    /// Share of installs, 0–100, chosen by a stable hash of the install id salted with the rule id.
    var percent: Double = 100

    var json: JSONValue {
        .object([
            "versions": versions.map { .string($0.text) } ?? .null,
            "builds": .array(builds.map(JSONValue.string)),
            "channels": .array(channels.map(JSONValue.string)),
            "idioms": .array(idioms.map(JSONValue.string)),
            "percent": .number(percent),
        ])
    }
}

/// The client a config is computed for (the query of `GET /v1/config`).
struct ConfigClient: Sendable, Hashable {
    var version: String?
    var build: String?
    var channel: String?
    var idiom: String?
    var installID: String?
}

extension ConfigRule {
    /// Whether the rule can match installs of `release` (its versions and builds admit it).
    func applies(to release: ReleaseID) -> Bool {
        (match.versions.map { $0.contains(release.version) } ?? true) && (match.builds.isEmpty || match.builds.contains(release.build))
    }

    func matches(_ client: ConfigClient) -> Bool {
        if let range = match.versions {
            guard let version = client.version, range.contains(version) else { return false }
        }
        return matchesIgnoringVersion(client)
    }

    /// Everything but the version range (checked, and cached, by the caller).
    func matchesIgnoringVersion(_ client: ConfigClient) -> Bool {
        guard eligibleIgnoringVersion(client) else { return false }
        if match.percent >= 100 { return true }
        guard let install = client.installID, !install.isEmpty, match.percent > 0 else { return false }
        return Double(Self.bucket(ruleID: id, installID: install)) < match.percent * 100
    }

    /// Builds, channels and idioms: whether the rule's percentage picks among this client's
    /// installs at all (the population of its split, `SampleRatio`).
    func eligibleIgnoringVersion(_ client: ConfigClient) -> Bool {
        if !match.builds.isEmpty { guard let build = client.build, match.builds.contains(build) else { return false } }
        if !match.channels.isEmpty { guard let channel = client.channel, match.channels.contains(channel) else { return false } }
        if !match.idioms.isEmpty { guard let idiom = client.idiom, match.idioms.contains(idiom) else { return false } }
        return true
    }

    /// 0..<10,000: where an install falls for a rule (`CohortBucket`, shared with WatchdogKit's
    /// `attest_percent`).
    static func bucket(ruleID: String, installID: String) -> Int {
        CohortBucket.of(key: ruleID, installID: installID)
    }
}

/// A version range: space-separated comparisons that must all hold, e.g. `>=14.2.0 <15`,
/// `14.2.0` (exactly), `>14`, `<=15.0.1`. Compared by semantic version.
struct VersionRange: Equatable, Sendable {
    enum Comparison: String, CaseIterable {
        case greaterOrEqual = ">="
        case lessOrEqual = "<="
        case greater = ">"
        case less = "<"
        case equal = "="
    }

    var text: String
    var terms: [(Comparison, String)]

    static func == (lhs: VersionRange, rhs: VersionRange) -> Bool { lhs.text == rhs.text }

    struct Invalid: Error {
        var reason: String
    }

    /// The range, or why `text` is not one (the reason goes into the error message).
    static func parse(_ text: String) -> Result<VersionRange, Invalid> {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard !parts.isEmpty, parts.count <= 8, text.utf8.count <= 128 else {
            return .failure(Invalid(reason: "must be 1–8 comparisons such as \">=14.2.0 <15\""))
        }
        var terms: [(Comparison, String)] = []
        for part in parts {
            let comparison = Comparison.allCases.first { part.hasPrefix($0.rawValue) } ?? .equal
            let version = part.hasPrefix(comparison.rawValue) ? String(part.dropFirst(comparison.rawValue.count)) : String(part)
            guard let first = version.utf8.first, first >= 48, first <= 57, version.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || $0 == 46 || $0 == 45 || $0 == 43 }) else {
                return .failure(Invalid(reason: "has \"\(part.prefix(32))\"; each comparison is >=, >, <=, < or = followed by a version such as 14.2.0"))
            }
            terms.append((comparison, version))
        }
        return .success(VersionRange(text: parts.joined(separator: " "), terms: terms))
    }

    func contains(_ version: String) -> Bool {
        terms.allSatisfy { comparison, bound in
            let order = ReleaseOrder.compareVersions(version, bound)
            switch comparison {
            case .greaterOrEqual: return order >= 0
            case .lessOrEqual: return order <= 0
            case .greater: return order > 0
            case .less: return order < 0
            case .equal: return order == 0
            }
        }
    }
}
