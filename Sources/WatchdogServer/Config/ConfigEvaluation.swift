import WatchdogWire

/// The effective config of one client: built-in defaults, overlaid by the app's defaults, then
/// by every matching rule in order; `test_crash` then switched off when its expiry passed or
/// when the install used up its daily budget. Each value remembers what decided it (`?explain=true`).
struct ConfigEvaluation: Sendable {
    var values: [String: JSONValue]
    var sources: [String: String]
    /// Bit i set: rule i matched (at most 64 rules).
    var matchedRules: UInt64
    var budgetExceeded = false

    /// The values before the per-install budget, for the rules in `mask`.
    static func evaluate(_ document: ConfigDocument, mask: UInt64, now: Int64) -> ConfigEvaluation {
        var values: [String: JSONValue] = [:]
        var sources: [String: String] = [:]
        for key in ConfigSchema.keys {
            values[key.name] = key.defaultValue ?? .null
            sources[key.name] = "built-in default"
        }
        for (key, value) in document.defaults {
            values[key] = value
            sources[key] = "defaults"
        }
        for (index, rule) in document.rules.enumerated() where mask & (1 << UInt64(index)) != 0 {
            for (key, value) in rule.set {
                values[key] = value
                sources[key] = "rule \(rule.id) (\(rule.name))"
            }
        }
        if values["test_crash"] == .bool(true), case .string(let text)? = values["test_crash_expires_at"],
           let expiry = Timestamp.parseMilliseconds(text), now >= expiry {
            values["test_crash"] = .bool(false)
            sources["test_crash"] = "test_crash_expires_at \(text) has passed"
        }
        return ConfigEvaluation(values: values, sources: sources, matchedRules: mask)
    }

    /// Which rules match a client.
    static func mask(_ document: ConfigDocument, client: ConfigClient) -> UInt64 {
        var mask: UInt64 = 0
        for (index, rule) in document.rules.enumerated() where rule.matches(client) { mask |= 1 << UInt64(index) }
        return mask
    }

    var testCrashOn: Bool { values["test_crash"] == .bool(true) }

    var budget: Int {
        if case .number(let value)? = values["test_crash_budget"] { return Int(value) }
        return 1
    }

    /// Applies the daily budget: `crashesToday` test crashes already reported by this install.
    mutating func applyBudget(crashesToday: Int) {
        guard testCrashOn, crashesToday >= budget else { return }
        values["test_crash"] = .bool(false)
        sources["test_crash"] = "test_crash_budget: \(crashesToday) test crash(es) reported today, budget \(budget)"
        budgetExceeded = true
    }

    /// Without an install id the daily budget cannot be kept, so `test_crash` stays off.
    mutating func refuseWithoutInstall() {
        guard testCrashOn else { return }
        values["test_crash"] = .bool(false)
        sources["test_crash"] = "test_crash needs install_id, to keep test_crash_budget"
        budgetExceeded = true
    }

    /// The JSON the client gets (keys sorted, so equal configs are equal bytes).
    var body: [UInt8] {
        (try? JSONBody.encode(JSONValue.object(values))) ?? Array("{}".utf8)
    }

    func explanation(_ document: ConfigDocument) -> JSONValue {
        var keys: [String: JSONValue] = [:]
        for (key, value) in values { keys[key] = .object(["value": value, "source": .string(sources[key] ?? "")]) }
        let matched = document.rules.enumerated().filter { matchedRules & (1 << UInt64($0.offset)) != 0 }.map { JSONValue.string($0.element.id) }
        return .object(["keys": .object(keys), "matched_rules": .array(matched), "config_version": .number(Double(document.version))])
    }

    /// The earliest future `test_crash_expires_at` in a document: when cached results go stale.
    static func nextExpiry(_ document: ConfigDocument, after now: Int64) -> Int64 {
        let candidates = ([document.defaults] + document.rules.map(\.set)).compactMap { values -> Int64? in
            guard case .string(let text)? = values["test_crash_expires_at"], let time = Timestamp.parseMilliseconds(text), time > now else { return nil }
            return time
        }
        return candidates.min() ?? .max
    }
}
