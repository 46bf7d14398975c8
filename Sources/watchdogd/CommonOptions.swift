import ArgumentParser
import Foundation
import Locking
import Logging
import WatchdogStore

/// Options every verb shares.
struct CommonOptions: ParsableArguments {
    @Option(name: .long, help: "A file of WATCHDOG_<OPTION>=value lines, like deploy/watchdogd.env; the command line and the environment win over it (env WATCHDOG_CONFIG).")
    var config: String?

    @Option(name: .long, help: "Directory of the SQLite database (env WATCHDOG_DATA_DIR, default ./data).")
    var dataDir: String?

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error (env WATCHDOG_LOG_LEVEL, default info).")
    var logLevel: String?

    @Option(name: .long, help: "Log format on stderr: human or json (env WATCHDOG_LOG_FORMAT, default human).")
    var logFormat: String?

    var resolvedDataDir: String { Environment.resolve(dataDir, .dataDir) ?? "./data" }

    func validate() throws {
        if let path = config ?? ProcessInfo.processInfo.environment["WATCHDOG_CONFIG"].flatMap({ $0.isEmpty ? nil : $0 }) {
            do {
                Environment.use(try ConfigFile(path: path))
            } catch let error as CLIError where config == nil {
                throw CLIError("\(error.description) (the file named by WATCHDOG_CONFIG)")
            }
        }
        if let level = Environment.resolve(logLevel, .logLevel), Logger.Level(rawValue: level) == nil {
            throw ValidationError("\(Environment.origin(.logLevel, flag: "--log-level", given: logLevel != nil)) must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")), got \(level)")
        }
        if let format = Environment.resolve(logFormat, .logFormat), !["human", "json"].contains(format) {
            throw ValidationError("\(Environment.origin(.logFormat, flag: "--log-format", given: logFormat != nil)) must be human or json, got \(format)")
        }
    }

    func makeLogger() -> Logger {
        let level = Environment.resolve(logLevel, .logLevel).flatMap(Logger.Level.init(rawValue:)) ?? .info
        let json = Environment.resolve(logFormat, .logFormat) == "json"
        var logger = Logger(label: "watchdogd") { label in
            json ? JSONLogHandler(label: label) as any LogHandler : StreamLogHandler.standardError(label: label)
        }
        logger.logLevel = level
        return logger
    }

    func openStore(synchronous: SQLiteStore.Synchronous = .full, floodCap: Int = SQLiteStore.defaultFloodCap) throws -> SQLiteStore {
        do {
            return try SQLiteStore(directory: resolvedDataDir, synchronous: synchronous, floodCap: floodCap)
        } catch {
            throw CLIError("cannot open the database in \(resolvedDataDir): \(error)")
        }
    }
}

/// Where a flag not given on the command line comes from: the `WATCHDOG_*` environment variable,
/// else the config file (`--config` or `WATCHDOG_CONFIG`). An empty variable counts as unset.
enum Environment {
    private static let configFile = Locked<ConfigFile?>(nil)

    /// Makes `file` the last place settings are looked up.
    static func use(_ file: ConfigFile) {
        configFile.withLock { $0 = file }
    }

    static func resolve(_ flag: String?, _ setting: Setting) -> String? {
        if let flag { return flag }
        if let value = ProcessInfo.processInfo.environment[setting.variable], !value.isEmpty { return value }
        guard let value = configFile.withLock({ $0?.entries[setting]?.value }), !value.isEmpty else { return nil }
        return value
    }

    /// A yes/no setting: the flag, else 1/true/yes/on or 0/false/no/off; anything else is refused
    /// (a typo must not quietly turn a protection off).
    static func resolveFlag(_ flag: Bool, _ setting: Setting) throws -> Bool {
        if flag { return true }
        guard let value = resolve(nil, setting)?.lowercased() else { return false }
        if ["1", "true", "yes", "on"].contains(value) { return true }
        if ["0", "false", "no", "off"].contains(value) { return false }
        throw ValidationError("\(origin(setting)) must be 1, true, yes, on, 0, false, no or off, got \(value.debugDescription)")
    }

    /// Names where a setting's value came from, for an error message: `flag` when it was given
    /// on the command line, else the variable, with the file and line when it came from there.
    static func origin(_ setting: Setting, flag: String, given: Bool) -> String {
        given ? flag : origin(setting)
    }

    /// The variable, with the file and line when the value came from the config file.
    static func origin(_ setting: Setting) -> String {
        if let value = ProcessInfo.processInfo.environment[setting.variable], !value.isEmpty { return setting.variable }
        guard let (path, line) = configFile.withLock({ file in file.flatMap { file in file.entries[setting].map { (file.path, $0.line) } } }) else {
            return setting.variable
        }
        return "\(setting.variable) (config file \(path), line \(line))"
    }
}

/// A failure to report to the person at the terminal, with exit code 1.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Writes a line a person reads to stderr.
func say(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Writes a line a script reads to stdout, flushed at once.
func emit(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}
