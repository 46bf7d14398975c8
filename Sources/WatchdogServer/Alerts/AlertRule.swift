import Foundation
import WatchdogStore
import WatchdogWire

/// What an alert rule watches a release for (docs/api-alerts.md, "Alerts"). Every condition rests on
/// sessions, never on report counts, so a flood from one device cannot fire it.
public enum AlertCondition: String, Sendable, CaseIterable {
    /// The release's affected-session rate against its predecessor (the previous release with
    /// sessions) is `regressed` — the verdict `GET …/compare` gives, overall or for one kind.
    case releaseRegressed = "release_regressed"
    /// An issue first seen in the release has at least `minimum_affected_sessions` sessions.
    case newIssue = "new_issue"
    /// The release's first test-crash reports arrived.
    case testCrashes = "test_crashes"
    /// An issue a person resolved has headline reports in a listed release after the one it
    /// was resolved in (`IssueTriage`): once per resolution, nothing while it is muted.
    case issueRegressed = "issue_regressed"
    /// The release's glitch-free session rate is below `threshold` with 95 % confidence (the
    /// upper bound of its interval, widened by clustering by install, is below it).
    case glitchFreeRateBelow = "glitch_free_rate_below"
    /// A guarded rollout's guard rolled its rule back to 0 % on a regression (sent by the
    /// rollout guard, once per rollout, not by the evaluation of releases).
    case rolloutRolledBack = "rollout_rolled_back"
    /// A guarded rollout reached its last step.
    case rolloutCompleted = "rollout_completed"
    /// A guarded rollout's guard paused it because it could not tell (its evidence read
    /// `unreliable`): a person resumes, advances or aborts it. Rules of `rollout_rolled_back`
    /// hear of it too: the guard could not decide whether a rollback is owed.
    case rolloutPaused = "rollout_paused"

    /// Sent by the rollout guard when a rollout ends or it pauses one, not found in a release.
    var isRollout: Bool { self == .rolloutRolledBack || self == .rolloutCompleted || self == .rolloutPaused }

    /// The fields a rule of this condition may carry besides `name`, `condition` and `hook`.
    var parameters: Set<String> {
        switch self {
        case .releaseRegressed: ["kind", "minimum_sessions", "minimum_installs", "installs"]
        case .newIssue: ["minimum_affected_sessions", "minimum_installs"]
        case .testCrashes, .issueRegressed: []
        case .glitchFreeRateBelow: ["threshold", "minimum_sessions", "minimum_installs", "installs"]
        case .rolloutRolledBack, .rolloutCompleted, .rolloutPaused: []
        }
    }
}

/// A rule as an admin writes it (API body or CLI flags), before it is checked.
public struct AlertRuleDraft: Sendable {
    public var name: String?
    public var condition: String
    public var hook: String
    public var kind: String?
    public var minimumSessions: Int?
    public var minimumAffectedSessions: Int?
    public var minimumInstalls: Int?
    public var threshold: Double?
    /// `all` (the default) or `attested`: the sessions of installs with an App Attest key only.
    public var installs: String?

    public init(name: String? = nil, condition: String, hook: String, kind: String? = nil, minimumSessions: Int? = nil,
                minimumAffectedSessions: Int? = nil, minimumInstalls: Int? = nil, threshold: Double? = nil, installs: String? = nil) {
        self.name = name
        self.condition = condition
        self.hook = hook
        self.kind = kind
        self.minimumSessions = minimumSessions
        self.minimumAffectedSessions = minimumAffectedSessions
        self.minimumInstalls = minimumInstalls
        self.threshold = threshold
        self.installs = installs
    }
}

/// Checks rules and hooks the same way for the API and the CLI, and makes their records.
public enum AlertRules {
    /// Rules one app may have.
    public static let maximumRules = 100
    /// Hooks one app may have.
    public static let maximumHooks = 20
    /// Default of `minimum_sessions`: a verdict or rate on fewer sessions is not worth a page.
    public static let defaultMinimumSessions = 100
    /// Default of `minimum_affected_sessions` (as the issues list's `regressed` badge needs).
    public static let defaultMinimumAffectedSessions = IssueRoutes.minimumAffectedSessionsForRegressed
    /// Default of `minimum_installs`: distinct installs that started sessions in the release
    /// (for `release_regressed`, in the predecessor too). Install ids are made by the client,
    /// so this alone does not stop a forger; it makes the cheapest forgery — one device, or a
    /// handful, replaying sessions — fire nothing, while a beta with a few dozen testers is
    /// covered. A smaller team sets it lower.
    public static let defaultMinimumInstalls = 20

    /// The rule a draft describes, or the error naming the field that is wrong.
    public static func rule(_ draft: AlertRuleDraft, app: String, id: String = newID(prefix: "ar"), createdAt: Int64, createdBy: String) throws(APIError) -> AlertRuleRecord {
        guard let condition = AlertCondition(rawValue: draft.condition) else {
            throw .badRequest("invalid_field", "condition must be one of \(AlertCondition.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(draft.condition.prefix(64))\"")
        }
        let given: [(String, Bool)] = [("kind", draft.kind != nil), ("minimum_sessions", draft.minimumSessions != nil),
                                       ("minimum_affected_sessions", draft.minimumAffectedSessions != nil),
                                       ("minimum_installs", draft.minimumInstalls != nil), ("threshold", draft.threshold != nil),
                                       ("installs", draft.installs != nil)]
        for (field, present) in given where present && !condition.parameters.contains(field) {
            let allowed = condition.parameters.sorted()
            throw .badRequest("invalid_field", "\(field) is not a parameter of \(condition.rawValue); it takes \(allowed.isEmpty ? "none" : allowed.joined(separator: ", "))")
        }
        let name = try text(draft.name ?? condition.rawValue, field: "name")
        guard !draft.hook.isEmpty, draft.hook.utf8.count <= 64 else { throw .badRequest("invalid_field", "hook must be the id of one of the app's hooks") }
        if let kind = draft.kind, !Vocabulary.isValidKind(kind) {
            throw .badRequest("invalid_field", "kind must be a report kind (\(Vocabulary.builtInKinds.sorted().joined(separator: ", ")) or x-<name>), got \"\(kind.prefix(64))\"")
        }
        if let installs = draft.installs, installs != "all", installs != "attested" {
            throw .badRequest("invalid_field", "installs must be all or attested, got \"\(installs.prefix(32))\"")
        }
        var minimumSessions = 0, minimumAffected = 0, minimumInstalls = 0
        if condition.parameters.contains("minimum_sessions") {
            minimumSessions = draft.minimumSessions ?? defaultMinimumSessions
            guard (0...1_000_000_000).contains(minimumSessions) else {
                throw .badRequest("invalid_field", "minimum_sessions must be a whole number from 0 to 1000000000, got \(minimumSessions)")
            }
        }
        if condition.parameters.contains("minimum_installs") {
            minimumInstalls = draft.minimumInstalls ?? defaultMinimumInstalls
            guard (0...1_000_000_000).contains(minimumInstalls) else {
                throw .badRequest("invalid_field", "minimum_installs must be a whole number from 0 to 1000000000, got \(minimumInstalls)")
            }
        }
        if condition == .newIssue {
            minimumAffected = draft.minimumAffectedSessions ?? defaultMinimumAffectedSessions
            guard (1...1_000_000_000).contains(minimumAffected) else {
                throw .badRequest("invalid_field", "minimum_affected_sessions must be a whole number from 1 to 1000000000, got \(minimumAffected)")
            }
        }
        if condition == .glitchFreeRateBelow {
            guard let threshold = draft.threshold else {
                throw .badRequest("invalid_field", "threshold is required for glitch_free_rate_below: a glitch-free session rate above 0 and at most 1, e.g. 0.99")
            }
            guard threshold.isFinite, threshold > 0, threshold <= 1 else {
                throw .badRequest("invalid_field", "threshold must be a glitch-free session rate above 0 and at most 1 (0.99 is 99 %), got \(threshold)")
            }
        }
        return AlertRuleRecord(id: id, app: app, name: name, condition: condition.rawValue, kind: draft.kind, minimumSessions: minimumSessions,
                               minimumAffectedSessions: minimumAffected, threshold: condition == .glitchFreeRateBelow ? draft.threshold : nil,
                               hookID: draft.hook, createdAt: createdAt, createdBy: createdBy, minimumInstalls: minimumInstalls,
                               installs: draft.installs ?? "all")
    }

    /// A hook for `url` with a fresh secret (`whsec_` and 64 hex digits), or the error naming
    /// the field that is wrong. Only `http` and `https` URLs with a host are accepted.
    public static func hook(name: String?, url: String, app: String, createdAt: Int64, createdBy: String) throws(APIError) -> AlertHookRecord {
        let name = try text(name ?? "webhook", field: "name")
        try validateURL(url)
        return AlertHookRecord(id: newID(prefix: "wh"), app: app, name: name, url: url, secret: "whsec_" + RandomSecret.hex(bytes: 32),
                               createdAt: createdAt, createdBy: createdBy)
    }

    /// What a hook URL may be (the same pattern is in openapi.yaml): `http` or `https`, a host
    /// name or IPv4 address, an optional port, then RFC 3986 path and query characters with
    /// well-formed `%` escapes; no user info, no `#fragment`, at most 2048 characters.
    static let urlPattern = #"[hH][tT][tT][pP][sS]?://[A-Za-z0-9.-]+(:([0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?([/?](%[0-9A-Fa-f]{2}|[A-Za-z0-9._~:/?@!$&'()*+,;=-])*)?"#

    static func validateURL(_ url: String) throws(APIError) {
        let matches = (try? Regex(urlPattern)).flatMap { try? $0.wholeMatch(in: url) } != nil
        guard url.utf8.count <= 2048, matches, URL(string: url)?.host != nil else {
            throw .badRequest("invalid_field", "url must be an http:// or https:// URL with a host name or IPv4 address, without user info or #fragment, at most 2048 characters, got \"\(url.prefix(80))\"")
        }
    }

    /// A name: 1–128 characters, no control characters.
    static func text(_ value: String, field: String) throws(APIError) -> String {
        guard !value.isEmpty, value.unicodeScalars.count <= 128, !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .badRequest("invalid_field", "\(field) must be 1–128 characters without control characters")
        }
        return value
    }

    /// `ar3f9a0c1d`: a prefix and 8 random hex digits.
    public static func newID(prefix: String) -> String {
        prefix + RandomSecret.hex(bytes: 4)
    }
}
