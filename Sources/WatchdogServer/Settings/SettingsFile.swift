import Foundation

/// A settings file (`--config`): `WATCHDOG_<NAME>=value` lines, the format of
/// `deploy/watchdogd.env` (and of systemd's `EnvironmentFile=`), so one file serves all three
/// ways of running watchdogd. Blank lines and `#` comments are skipped; a value may be wrapped
/// in single or double quotes. Anything else is refused with the file and line: a misspelt
/// setting must not be ignored.
public struct SettingsFile: Sendable {
    public struct Entry: Sendable {
        public var value: String
        public var line: Int
    }

    public let path: String
    /// By variable name, e.g. `WATCHDOG_RATE_PER_KEY`.
    public private(set) var entries: [String: Entry] = [:]
    private let known: [String]

    /// Reads `path`, accepting the variables in `known` (`SettingsTable.fileVariables`).
    public init(path: String, known: [String]) throws(SettingsError) {
        self.path = path
        self.known = known
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw SettingsError("cannot read the config file \(path): \((error as NSError).localizedDescription)")
        }
        // `\.isNewline`: in Swift "\r\n" is one Character, so splitting on "\n" alone would read
        // a file saved with CRLF endings as a single line.
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            try parse(rawLine.trimmingCharacters(in: .whitespaces), line: index + 1)
        }
    }

    private mutating func parse(_ line: String, line number: Int) throws(SettingsError) {
        if line.isEmpty || line.hasPrefix("#") { return }
        let assignment = line.hasPrefix("export ") ? String(line.dropFirst("export ".count)) : line
        guard let equals = assignment.firstIndex(of: "=") else {
            throw failure(number, "expected WATCHDOG_<NAME>=value, got \(assignment.debugDescription)")
        }
        let name = assignment[..<equals].trimmingCharacters(in: .whitespaces)
        guard known.contains(name) else {
            throw failure(number, "unknown setting \(name.debugDescription); known: \(known.joined(separator: ", "))")
        }
        if let earlier = entries[name] {
            throw failure(number, "\(name) is already set on line \(earlier.line)")
        }
        var value = assignment[assignment.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        for quote in ["\"", "'"] where value.count >= 2 && value.hasPrefix(quote) && value.hasSuffix(quote) {
            value = String(value.dropFirst().dropLast())
        }
        entries[name] = Entry(value: value, line: number)
    }

    private func failure(_ line: Int, _ message: String) -> SettingsError {
        SettingsError("config file \(path), line \(line): \(message)")
    }
}
