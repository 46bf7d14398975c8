/// docs/configuration.md, written from the settings table (`watchdogd settings` prints it), so
/// the operators' reference cannot drift from what `serve` accepts: `SettingsReferenceTests`
/// fails when the file and the table differ.
public enum SettingsReference {
    /// The options every verb shares (`CommonOptions` in watchdogd): not in the table, listed
    /// here with the same words as their `--help`.
    public static let common: [(flag: String, help: String, defaultText: String?)] = [
        ("--config <file>", "A file of WATCHDOG_<OPTION>=value lines, like deploy/watchdogd.env; the command line and the environment win over it.", nil),
        ("--data-dir <dir>", "Directory of the SQLite database.", "./data"),
        ("--store <sqlite|url>", "Where data is kept: sqlite (the file in --data-dir) or a PostgreSQL URL, postgres://user@host/db, shared by several watchdogd.", "sqlite"),
        ("--log-level <level>", "Log level: trace, debug, info, notice, warning, error.", "info"),
        ("--log-format <format>", "Log format on stderr: human or json.", "human"),
    ]

    /// The whole page, Markdown.
    public static func markdown(_ settings: [Setting] = SettingsTable.serve) -> String {
        var lines = [
            "# Configuration reference",
            "",
            "<!-- Written by `watchdogd settings > docs/configuration.md` from the settings table",
            "     (Sources/WatchdogServer/Settings/SettingsTable.swift); a test fails when they differ. -->",
            "",
            "Every setting of `watchdogd serve` is a flag, a `WATCHDOG_*` variable in the environment, or a",
            "`WATCHDOG_*=value` line of the settings file (`--config`, e.g. `deploy/watchdogd.env`): the",
            "command line wins, then the environment, then the file. A value that does not fit is refused",
            "at start with the setting's name and where the value came from.",
            "",
            "## Options of every command",
            "",
            "| Flag | Variable | Default | What it does |",
            "|---|---|---|---|",
        ]
        for option in common {
            let name = option.flag.dropFirst(2).prefix { $0 != " " }
            lines.append("| `\(cell(option.flag))` | `\(Setting.variable(for: String(name)))` | \(option.defaultText.map { "`\(cell($0))`" } ?? "—") | \(prose(option.help)) |")
        }
        lines += ["", "## `watchdogd serve`", "", "| Flag | Variable | Default | What it does |", "|---|---|---|---|"]
        for setting in settings where !setting.hidden {
            let flag = switch setting.kind {
            case .value(let placeholder), .list(let placeholder): "--\(setting.name) <\(placeholder)>"
            case .toggle: "--\(setting.name)"
            }
            let repeatable = if case .list = setting.kind { " Repeatable; comma-separated in the environment or the file." } else { "" }
            let defaultText = setting.defaultText.map { $0.isEmpty ? "—" : "`\(cell($0))`" } ?? (setting.kind == .toggle ? "off" : "—")
            lines.append("| `\(cell(flag))` | `\(setting.variable)` | \(defaultText) | \(prose(setting.help + repeatable)) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Help text in a cell: as `cell`, and `<NAME>` kept as text rather than read as an HTML tag.
    private static func prose(_ text: String) -> String {
        cell(text).replacingOccurrences(of: "<", with: "\\<")
    }

    /// Text inside a table cell: a `|` would end it, a line break would end the row.
    private static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }
}
