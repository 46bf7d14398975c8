import ArgumentParser
import Foundation
import Logging
import WatchdogServer
import WatchdogStore

/// Options every verb shares.
struct CommonOptions: ParsableArguments {
    @Option(name: .long, help: "A file of WATCHDOG_<OPTION>=value lines, like deploy/watchdogd.env; the command line and the environment win over it (env WATCHDOG_CONFIG).")
    var config: String?

    @Option(name: .long, help: "Directory of the SQLite database (env WATCHDOG_DATA_DIR, default ./data).")
    var dataDir: String?

    @Option(name: .long, help: "Where data is kept: sqlite (the file in --data-dir, the default) or a PostgreSQL URL, postgres://user@host/db, shared by several watchdogd (env WATCHDOG_STORE).")
    var store: String?

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error (env WATCHDOG_LOG_LEVEL, default info).")
    var logLevel: String?

    @Option(name: .long, help: "Log format on stderr: human or json (env WATCHDOG_LOG_FORMAT, default human).")
    var logFormat: String?

    var resolvedDataDir: String { (try? sources())?.value(name: "data-dir") ?? dataDir ?? ServerSettings().dataDirectory }

    /// The PostgreSQL URL when `--store`/`WATCHDOG_STORE` names one; `nil` for SQLite.
    var postgresURL: String? {
        let value = (try? sources())?.value(name: "store") ?? store ?? "sqlite"
        return value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") ? value : nil
    }

    /// Where settings come from for this invocation: these flags (and `serveFlags`, the serve
    /// verb's table flags), the environment, the settings file (`--config` or
    /// `WATCHDOG_CONFIG`). Built on demand: no global holds it.
    func sources(serveFlags: [String: [String]] = [:]) throws -> SettingsSources {
        let environment = ProcessInfo.processInfo.environment
        var file: SettingsFile?
        if let path = config ?? environment["WATCHDOG_CONFIG"].flatMap({ $0.isEmpty ? nil : $0 }) {
            do {
                file = try SettingsFile(path: path, known: SettingsTable.fileVariables)
            } catch {
                throw CLIError(config == nil ? "\(error.description) (the file named by WATCHDOG_CONFIG)" : error.description)
            }
        }
        var flags = serveFlags
        for (name, value) in [("data-dir", dataDir), ("store", store), ("log-level", logLevel), ("log-format", logFormat)] {
            if let value { flags[name] = [value] }
        }
        return SettingsSources(flags: flags, environment: environment, file: file)
    }

    func validate() throws {
        let sources = try sources()
        if let (values, origin) = sources.values(name: "log-level", variable: "WATCHDOG_LOG_LEVEL"), let level = values.last, Logger.Level(rawValue: level) == nil {
            throw ValidationError("\(origin) must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")), got \(level)")
        }
        if let (values, origin) = sources.values(name: "store", variable: "WATCHDOG_STORE"), let store = values.last,
           store != "sqlite", !store.hasPrefix("postgres://"), !store.hasPrefix("postgresql://") {
            throw ValidationError("\(origin) must be sqlite or a postgres:// URL, got \(store)")
        }
        if let (values, origin) = sources.values(name: "log-format", variable: "WATCHDOG_LOG_FORMAT"), let format = values.last, !["human", "json"].contains(format) {
            throw ValidationError("\(origin) must be human or json, got \(format)")
        }
    }

    func makeLogger() -> Logger {
        let sources = try? sources()
        let level = sources?.value(name: "log-level").flatMap(Logger.Level.init(rawValue:)) ?? .info
        let json = sources?.value(name: "log-format") == "json"
        var logger = Logger(label: "watchdogd") { label in
            json ? JSONLogHandler(label: label) as any LogHandler : StreamLogHandler.standardError(label: label)
        }
        logger.logLevel = level
        return logger
    }

    /// The store `--store` names: the SQLite file in the data dir, or PostgreSQL.
    func openStore(synchronous: SQLiteStore.Synchronous = .full, floodCap: Int = SQLiteStore.defaultFloodCap) throws -> any TelemetryStore {
        guard let url = postgresURL else { return try openSQLiteStore(synchronous: synchronous, floodCap: floodCap) }
        do {
            return try PostgresStore(url: url, floodCap: floodCap)
        } catch {
            throw CLIError("cannot open the PostgreSQL store at \(PostgresStore.redacted(url)): \(error)")
        }
    }

    /// The SQLite store of the data dir (backup and restore work on its file).
    func openSQLiteStore(synchronous: SQLiteStore.Synchronous = .full, floodCap: Int = SQLiteStore.defaultFloodCap) throws -> SQLiteStore {
        if postgresURL != nil { throw CLIError("this command works on the SQLite data dir; with PostgreSQL use its own tools (pg_dump)") }
        do {
            return try SQLiteStore(directory: resolvedDataDir, synchronous: synchronous, floodCap: floodCap)
        } catch {
            throw CLIError("cannot open the database in \(resolvedDataDir): \(error)")
        }
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
