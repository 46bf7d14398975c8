import WatchdogStore
import WatchdogWire

/// A config rule that switches part of a compared release's installs (issue 44): `compare`
/// names it, since the release's figures then mix installs with and without the switch —
/// Config effect (`/cohorts`) splits them. A rule of 0 % or 100 %, or one whose versions or
/// builds leave the release out, switches all or none of it and is not named.
struct PartialRuleView: Encodable, Equatable {
    var rule: String
    var name: String
    var percent: Double
    var set: JSONValue
    /// `base`, `target` or both: the sides whose release the rule splits.
    var sides: [String]
    /// The guarded rollout moving this rule's percentage, while it is active or paused (`null`:
    /// none, or it finished): a viewer is told a rollout is switching part of the release.
    @NullWhenAbsent var rollout: RolloutStep? = nil

    /// Where a rollout of the rule stands: its status, its step (1-based) of `steps` and the
    /// percentage it gave the rule.
    struct RolloutStep: Encodable, Equatable, Sendable {
        var status: String
        var step: Int
        var steps: Int
        var percent: Double
    }

    /// The current config's rules that split `base` or `target`, in the config's order.
    static func of(_ rules: [ConfigRule], base: ReleaseID, target: ReleaseID) -> [PartialRuleView] {
        rules.compactMap { rule in
            guard rule.match.percent > 0, rule.match.percent < 100 else { return nil }
            let sides = [("base", base), ("target", target)].filter { rule.applies(to: $0.1) }.map(\.0)
            guard !sides.isEmpty else { return nil }
            return PartialRuleView(rule: rule.id, name: rule.name, percent: rule.match.percent, set: .object(rule.set), sides: sides)
        }
    }

    /// Names the rule's unfinished rollout among `rollouts`, if it has one.
    mutating func name(rolloutAmong rollouts: [Rollout]) {
        guard let rollout = rollouts.first(where: { $0.rule == self.rule && !$0.isFinished }) else { return }
        self.rollout = RolloutStep(status: rollout.status.rawValue, step: rollout.step + 1, steps: rollout.plan.steps.count, percent: rollout.percent)
    }
}
