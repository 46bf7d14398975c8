import WatchdogWire

/// The remote-config keys of docs/remote-config.md: their defaults and what values they take.
enum ConfigSchema {
    enum ValueRule {
        case boolean
        case number(ClosedRange<Double>)
        case integer(ClosedRange<Double>)
        case timestamp

        var description: String {
            switch self {
            case .boolean: "true or false"
            case .number(let range): "a number from \(format(range.lowerBound)) to \(format(range.upperBound))"
            case .integer(let range): "a whole number from \(format(range.lowerBound)) to \(format(range.upperBound))"
            case .timestamp: "an RFC 3339 time such as 2026-12-01T00:00:00Z, or null"
            }
        }

        private func format(_ value: Double) -> String {
            value == value.rounded() ? String(Int64(value)) : String(value)
        }
    }

    struct Key {
        var name: String
        var rule: ValueRule
        /// `nil`: no default (absent from the effective config unless set; sent as null).
        var defaultValue: JSONValue?
    }

    static let keys: [Key] = [
        Key(name: "enabled", rule: .boolean, defaultValue: .bool(true)),
        Key(name: "test_crash", rule: .boolean, defaultValue: .bool(false)),
        Key(name: "auto_fix", rule: .boolean, defaultValue: .bool(false)),
        Key(name: "watchdog_interval_s", rule: .number(0.1...3600), defaultValue: .number(1.0)),
        Key(name: "frame_tolerance_pt", rule: .number(0...1000), defaultValue: .number(1.0)),
        Key(name: "lock_threshold_s", rule: .number(0.1...3600), defaultValue: .number(10)),
        Key(name: "report_sample_rate", rule: .number(0...1), defaultValue: .number(1.0)),
        Key(name: "test_crash_budget", rule: .integer(0...1000), defaultValue: .number(1)),
        Key(name: "test_crash_expires_at", rule: .timestamp, defaultValue: nil),
        // The share of installs (by install id) that attest with App Attest: Apple asks apps to
        // onboard gradually. 100 keeps what apps that turned attestation on had.
        Key(name: "attest_percent", rule: .number(0...100), defaultValue: .number(100)),
    ]

    static let keyNames: Set<String> = Set(keys.map(\.name))

    static func key(named name: String) -> Key? {
        keys.first { $0.name == name }
    }

    /// Checks one key's value; the error names the key and what would be valid.
    static func check(_ name: String, _ value: JSONValue, path: String) throws(APIError) {
        guard let key = key(named: name) else {
            throw .badRequest("unknown_config_key", "\(path) is not a config key; known keys: \(keys.map(\.name).joined(separator: ", "))")
        }
        let valid: Bool
        switch (key.rule, value) {
        case (.boolean, .bool): valid = true
        case (.number(let range), .number(let number)): valid = number.isFinite && range.contains(number)
        case (.integer(let range), .number(let number)): valid = number == number.rounded() && range.contains(number)
        case (.timestamp, .string(let text)): valid = Timestamp.parseMilliseconds(text) != nil
        case (.timestamp, .null): valid = true
        default: valid = false
        }
        guard valid else {
            throw .badRequest("invalid_config_value", "\(path) must be \(key.rule.description), got \(value.brief)")
        }
    }
}
