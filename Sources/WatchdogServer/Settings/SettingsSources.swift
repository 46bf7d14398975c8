/// Where settings come from, strongest first: the command line, the `WATCHDOG_*` environment
/// (an empty variable counts as unset), the settings file (`--config` or `WATCHDOG_CONFIG`),
/// then the defaults of `ServerSettings`. A value, not a global: each command builds its own.
public struct SettingsSources: Sendable {
    /// Values given on the command line, by flag name without dashes (`rate-per-key`); a
    /// toggle given alone is `["true"]`.
    public var flags: [String: [String]]
    public var environment: [String: String]
    public var file: SettingsFile?

    public init(flags: [String: [String]] = [:], environment: [String: String] = [:], file: SettingsFile? = nil) {
        self.flags = flags
        self.environment = environment
        self.file = file
    }

    /// The values of the setting named `name` (flag name) with variable `variable`, and where
    /// they came from for an error message; `nil` when no source sets it.
    public func values(name: String, variable: String) -> (values: [String], origin: String)? {
        if let given = flags[name], !given.isEmpty { return (given, "--\(name)") }
        if let value = environment[variable], !value.isEmpty { return ([value], variable) }
        if let file, let entry = file.entries[variable], !entry.value.isEmpty {
            return ([entry.value], "\(variable) (config file \(file.path), line \(entry.line))")
        }
        return nil
    }

    /// One value (the last given).
    public func value(name: String) -> String? {
        values(name: name, variable: Setting.variable(for: name))?.values.last
    }

    /// `base` with every setting of `table` a source sets, checked.
    public func resolve(_ table: [Setting] = SettingsTable.serve, into base: ServerSettings = ServerSettings()) throws(SettingsError) -> ServerSettings {
        var settings = base
        for setting in table {
            guard let (values, origin) = values(name: setting.name, variable: setting.variable) else { continue }
            do {
                try setting.apply(&settings, values)
            } catch {
                throw SettingsError("\(origin) must \(error.mustBe)")
            }
        }
        return settings
    }
}

/// A setting that cannot be used, with where it came from and what would be valid.
public struct SettingsError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
