import Foundation

/// Every setting a flag can also take from `WATCHDOG_<NAME>` in the environment or a config file.
enum Setting: String, CaseIterable, Sendable {
    case dataDir = "DATA_DIR"
    case logLevel = "LOG_LEVEL"
    case logFormat = "LOG_FORMAT"
    case listen = "LISTEN"
    case synchronous = "SYNCHRONOUS"
    case httpThreads = "HTTP_THREADS"
    case connectionLimit = "CONNECTION_LIMIT"
    case perIPConnectionLimit = "PER_IP_CONNECTION_LIMIT"
    case connectionTimeout = "CONNECTION_TIMEOUT"
    case headerTimeout = "HEADER_TIMEOUT"
    case configMaxAge = "CONFIG_MAX_AGE"
    case chartJSDir = "CHART_JS_DIR"
    case ratePerKey = "RATE_PER_KEY"
    case ratePerAddress = "RATE_PER_ADDRESS"
    case failedAuthPerAddress = "FAILED_AUTH_PER_ADDRESS"
    case ingestQueueItems = "INGEST_QUEUE_ITEMS"
    case floodCap = "FLOOD_CAP"
    case retentionDays = "RETENTION_DAYS"
    case retentionInterval = "RETENTION_INTERVAL"
    case trustedProxy = "TRUSTED_PROXY"
    case metricsToken = "METRICS_TOKEN"
    case cookieSecure = "COOKIE_SECURE"
    case demo = "DEMO"
    case resourcesDir = "RESOURCES_DIR"

    /// The environment variable, e.g. `WATCHDOG_DATA_DIR`.
    var variable: String { "WATCHDOG_\(rawValue)" }
}

/// A config file: `WATCHDOG_<NAME>=value` lines, the format of `deploy/watchdogd.env` (and of
/// systemd's `EnvironmentFile=`), so one file serves all three ways of running watchdogd.
/// Blank lines and `#` comments are skipped; a value may be wrapped in single or double quotes.
/// Anything else is refused with the file and line: a misspelt setting must not be ignored.
struct ConfigFile: Sendable {
    struct Entry: Sendable {
        var value: String
        var line: Int
    }

    let path: String
    private(set) var entries: [Setting: Entry] = [:]

    init(path: String) throws {
        self.path = path
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw CLIError("cannot read the config file \(path): \((error as NSError).localizedDescription)")
        }
        // `\.isNewline`: in Swift "\r\n" is one Character, so splitting on "\n" alone would read
        // a file saved with CRLF endings as a single line.
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            try parse(rawLine.trimmingCharacters(in: .whitespaces), line: index + 1)
        }
    }

    private mutating func parse(_ line: String, line number: Int) throws {
        if line.isEmpty || line.hasPrefix("#") { return }
        let assignment = line.hasPrefix("export ") ? String(line.dropFirst("export ".count)) : line
        guard let equals = assignment.firstIndex(of: "=") else {
            throw failure(number, "expected WATCHDOG_<NAME>=value, got \(assignment.debugDescription)")
        }
        let name = assignment[..<equals].trimmingCharacters(in: .whitespaces)
        guard let setting = Setting.allCases.first(where: { $0.variable == name }) else {
            throw failure(number, "unknown setting \(name.debugDescription); known: \(Setting.allCases.map(\.variable).joined(separator: ", "))")
        }
        if let earlier = entries[setting] {
            throw failure(number, "\(name) is already set on line \(earlier.line)")
        }
        var value = assignment[assignment.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        for quote in ["\"", "'"] where value.count >= 2 && value.hasPrefix(quote) && value.hasSuffix(quote) {
            value = String(value.dropFirst().dropLast())
        }
        entries[setting] = Entry(value: value, line: number)
    }

    private func failure(_ line: Int, _ message: String) -> CLIError {
        CLIError("config file \(path), line \(line): \(message)")
    }
}
