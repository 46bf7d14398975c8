import WatchdogStore

/// The kinds of change an app can require a second person's approval for (four eyes, issue 41).
public enum ApprovalKind: String, CaseIterable, Sendable {
    /// A config change that turns `test_crash` on for someone (defaults or a rule).
    case testCrash = "test_crash"
    /// Starting a guarded rollout.
    case rollouts
    /// Any config change (PUT, PATCH, rollback).
    case config
    /// Attestation settings with `mode: require`.
    case attestation
    /// Deleting a release and its data.
    case releaseDelete = "release_delete"

    /// A list of kinds from text (`test_crash,rollouts`), or the error naming the one unknown.
    public static func parse(_ names: [String]) throws(APIError) -> [ApprovalKind] {
        var kinds: [ApprovalKind] = []
        for name in names {
            guard let kind = ApprovalKind(rawValue: name) else {
                throw .badRequest("invalid_field", "\"\(name.prefix(40))\" is not a kind of change; the kinds are \(allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if !kinds.contains(kind) { kinds.append(kind) }
        }
        return kinds
    }

    /// How long a proposal waits for its approval: 24 hours, then it is never applied.
    static let proposalLifetimeMilliseconds: Int64 = 24 * 3_600_000
}
