import ArgumentParser
import Foundation
import Logging
import WatchdogStore

/// Options every verb shares.
struct CommonOptions: ParsableArguments {
    @Option(name: .long, help: "Directory of the SQLite database (env WATCHDOG_DATA_DIR, default ./data).")
    var dataDir: String?

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error (env WATCHDOG_LOG_LEVEL, default info).")
    var logLevel: String?

    @Option(name: .long, help: "Log format on stderr: human or json (env WATCHDOG_LOG_FORMAT, default human).")
    var logFormat: String?

    var resolvedDataDir: String { Environment.resolve(dataDir, "DATA_DIR") ?? "./data" }

    func validate() throws {
        if let level = Environment.resolve(logLevel, "LOG_LEVEL"), Logger.Level(rawValue: level) == nil {
            throw ValidationError("log level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")), got \(level)")
        }
        if let format = Environment.resolve(logFormat, "LOG_FORMAT"), !["human", "json"].contains(format) {
            throw ValidationError("log format must be human or json, got \(format)")
        }
    }

    func makeLogger() -> Logger {
        let level = Environment.resolve(logLevel, "LOG_LEVEL").flatMap(Logger.Level.init(rawValue:)) ?? .info
        let json = Environment.resolve(logFormat, "LOG_FORMAT") == "json"
        var logger = Logger(label: "watchdogd") { label in
            json ? JSONLogHandler(label: label) as any LogHandler : StreamLogHandler.standardError(label: label)
        }
        logger.logLevel = level
        return logger
    }

    func openStore(synchronous: SQLiteStore.Synchronous = .full) throws -> SQLiteStore {
        do {
            return try SQLiteStore(directory: resolvedDataDir, synchronous: synchronous)
        } catch {
            throw CLIError("cannot open the database in \(resolvedDataDir): \(error)")
        }
    }
}

/// Flags from `WATCHDOG_*` environment variables when not given on the command line.
enum Environment {
    static func resolve(_ flag: String?, _ name: String) -> String? {
        if let flag { return flag }
        guard let value = ProcessInfo.processInfo.environment["WATCHDOG_\(name)"], !value.isEmpty else { return nil }
        return value
    }

    static func resolveFlag(_ flag: Bool, _ name: String) -> Bool {
        if flag { return true }
        guard let value = ProcessInfo.processInfo.environment["WATCHDOG_\(name)"]?.lowercased() else { return false }
        return ["1", "true", "yes", "on"].contains(value)
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
