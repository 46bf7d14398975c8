import WatchdogWire

/// How a config rule is rolled out (docs/rollouts-and-alerts.md, "Guarded rollouts"): the percentages it goes
/// through, what each step needs before the next, and what counts as harm.
///
/// ```json
/// {"rule": "r1", "steps": [1, 5, 25, 50, 100], "minimum_sessions": 200, "minimum_hours": 24,
///  "guard": {"overall": true, "kinds": ["view_frame_mismatch"]}}
/// ```
struct RolloutPlan: Codable, Equatable, Sendable {
    /// Percentages of installs, 2–10 of them, increasing, each from 1 to 100; reaching the
    /// last one completes the rollout (at 100 % no installs are left to compare against).
    var steps: [Double]
    /// Session starts each cohort (matched and not matched) needs at a step, counted since the
    /// step began, summed over the releases the rule applies to.
    var minimumSessions: Int
    /// Hours a step lasts at least (by the server's clock).
    var minimumHours: Double
    var `guard`: RolloutGuard

    static let maximumSteps = 10
    static let defaultSteps: [Double] = [1, 5, 25, 50, 100]
    static let defaultMinimumSessions = 200
    static let defaultMinimumHours = 24.0
    static let maximumMinimumHours = 24.0 * 90
}

/// Which worsening rolls a rule back: a `regressed` verdict (sequential interval, matched
/// installs against the others) on all kinds together (`overall`) and/or on each listed kind.
struct RolloutGuard: Codable, Equatable, Sendable {
    var overall: Bool
    var kinds: [String]

    static let maximumKinds = 16
}

/// Reads and checks a plan (`POST …/rollouts`); every error names the field.
enum RolloutPlanReader {
    static let fields: Set<String> = ["rule", "steps", "minimum_sessions", "minimum_hours", "guard"]
    static let example = #"{"rule": "r1", "steps": [1, 5, 25, 50, 100], "minimum_sessions": 200, "minimum_hours": 24, "guard": {"overall": true, "kinds": ["view_frame_mismatch"]}}"#

    /// The rule id of a request body.
    static func rule(_ fields: [String: JSONValue]) throws(APIError) -> String {
        guard case .string(let rule)? = fields["rule"], !rule.isEmpty, rule.utf8.count <= 64 else {
            throw .badRequest("invalid_field", "rule must be the id of one of the app's config rules, e.g. \(example)")
        }
        return rule
    }

    /// The rule id and the plan of a request body.
    static func read(_ fields: [String: JSONValue]) throws(APIError) -> (rule: String, plan: RolloutPlan) {
        let rule = try rule(fields)
        let plan = RolloutPlan(steps: try steps(fields["steps"]),
                               minimumSessions: try minimumSessions(fields["minimum_sessions"]),
                               minimumHours: try minimumHours(fields["minimum_hours"]),
                               guard: try guardRule(fields["guard"]))
        return (rule, plan)
    }

    static func steps(_ value: JSONValue?) throws(APIError) -> [Double] {
        guard let value, value != .null else { return RolloutPlan.defaultSteps }
        guard case .array(let items) = value, (2...RolloutPlan.maximumSteps).contains(items.count) else {
            throw .badRequest("invalid_field", "steps must be 2–\(RolloutPlan.maximumSteps) percentages, e.g. [1, 5, 25, 50, 100]")
        }
        var steps: [Double] = []
        for (index, item) in items.enumerated() {
            guard case .number(let percent) = item, percent.isFinite, percent >= 1, percent <= 100 else {
                throw .badRequest("invalid_field", "steps[\(index)] must be a percentage from 1 to 100, got \(item.brief)")
            }
            if let previous = steps.last, percent <= previous {
                throw .badRequest("invalid_field", "steps must increase: steps[\(index)] is \(item.brief) after \(JSONValue.number(previous).brief)")
            }
            steps.append(percent)
        }
        return steps
    }

    static func minimumSessions(_ value: JSONValue?) throws(APIError) -> Int {
        guard let value, value != .null else { return RolloutPlan.defaultMinimumSessions }
        guard case .number(let number) = value, number == number.rounded(), number >= 1, number <= 1e9 else {
            throw .badRequest("invalid_field", "minimum_sessions must be a whole number from 1 to 1000000000, got \(value.brief)")
        }
        return Int(number)
    }

    static func minimumHours(_ value: JSONValue?) throws(APIError) -> Double {
        guard let value, value != .null else { return RolloutPlan.defaultMinimumHours }
        guard case .number(let hours) = value, hours.isFinite, hours >= 0, hours <= RolloutPlan.maximumMinimumHours else {
            throw .badRequest("invalid_field", "minimum_hours must be a number of hours from 0 to \(Int(RolloutPlan.maximumMinimumHours)), got \(value.brief)")
        }
        return hours
    }

    static func guardRule(_ value: JSONValue?) throws(APIError) -> RolloutGuard {
        guard let value, value != .null else { return RolloutGuard(overall: true, kinds: []) }
        guard case .object(let fields) = value else { throw .badRequest("invalid_field", "guard must be an object {\"overall\": true, \"kinds\": [...]}") }
        for key in fields.keys.sorted() where key != "overall" && key != "kinds" {
            throw .badRequest("invalid_field", "guard.\(key.prefix(40)) is not a field; the fields are kinds, overall")
        }
        var overall = true
        switch fields["overall"] {
        case nil, .null?: break
        case .bool(let flag)?: overall = flag
        case let other?: throw .badRequest("invalid_field", "guard.overall must be true or false, got \(other.typeName)")
        }
        var kinds: [String] = []
        switch fields["kinds"] {
        case nil, .null?: break
        case .array(let items)? where items.count <= RolloutGuard.maximumKinds:
            for (index, item) in items.enumerated() {
                guard case .string(let kind) = item, Vocabulary.isValidKind(kind) else {
                    throw .badRequest("invalid_field", "guard.kinds[\(index)] must be a report kind (\(Vocabulary.builtInKinds.sorted().joined(separator: ", ")) or x-<name>), got \(item.brief)")
                }
                if !kinds.contains(kind) { kinds.append(kind) }
            }
        case let other?:
            throw .badRequest("invalid_field", "guard.kinds must be an array of at most \(RolloutGuard.maximumKinds) report kinds, got \(other.brief)")
        }
        guard overall || !kinds.isEmpty else {
            throw .badRequest("invalid_field", "guard watches nothing: set overall to true or list kinds")
        }
        return RolloutGuard(overall: overall, kinds: kinds)
    }
}
