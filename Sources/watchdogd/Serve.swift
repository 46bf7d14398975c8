import ArgumentParser
import Dispatch
import Foundation
import Logging
import WatchdogHTTP
import WatchdogServer
import WatchdogStore

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the HTTP server.",
        discussion: """
            Prints 'listening on http://HOST:PORT' on stdout once it accepts connections (useful with port 0).

            SETTINGS (each also WATCHDOG_<NAME> in the environment or in the --config file; the command line wins, then the environment, then the file):
            \(SettingsTable.help())
            """
    )

    @OptionGroup var common: CommonOptions

    /// The settings of `SettingsTable.serve` (`--rate-per-key 10`, `--cookie-secure`, …),
    /// parsed from the table rather than declared here one by one.
    @Argument(parsing: .allUnrecognized, help: .hidden)
    var settingArguments: [String] = []

    func run() throws {
        let logger = common.makeLogger()
        let settings = try resolveSettings()
        // One serve per SQLite data dir; PostgreSQL is shared by design.
        let lock = common.postgresURL == nil ? try ServeLock(dataDirectory: settings.dataDirectory) : nil
        if let lock, !lock.tryLock() {
            throw CLIError("another watchdogd serve is running on \(settings.dataDirectory)")
        }
        let store = try common.openStore(synchronous: settings.synchronous, floodCap: settings.floodCap)
        if settings.demo {
            if try DemoData.install(into: store, nowMilliseconds: WatchdogServer.systemClock()) {
                logger.info("created demo app \(DemoData.app) with two releases of data")
            }
        }

        signal(SIGPIPE, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let stop = DispatchSemaphore(value: 0)
        let sources = [SIGTERM, SIGINT].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }

        let testClock = try settings.testClockFile.map { try TestClock(path: $0) }
        let server: WatchdogServer
        do {
            server = try WatchdogServer(settings: settings, store: store, logger: logger, clock: testClock?.now ?? WatchdogServer.systemClock)
        } catch {
            throw CLIError("\(error)")
        }
        let host = settings.listen.isIPv6 ? "[\(settings.listen.host)]" : settings.listen.host
        let url = "http://\(host):\(server.port)"
                let where_: Logger.Metadata = common.postgresURL.map { ["store": "\(PostgresStore.redacted($0))"] }
            ?? ["data_dir": "\(settings.dataDirectory)", "synchronous": "\(settings.synchronous.rawValue)"]
        logger.info("listening", metadata: ["url": "\(url)"].merging(where_) { old, _ in old })
        emit("listening on \(url)")
        if settings.demo { try printDemoCredentials(store: store, server: server, url: url) }
        let lifecycle = ServiceLifecycle(logger: logger)
        lifecycle.ready(server: server, listen: settings.listen, url: url)

        stop.wait()
        logger.info("stopping: draining requests in flight and committing queued reports")
        lifecycle.stopping()
        server.shutdown()
        try store.close()
        sources.forEach { $0.cancel() }
        logger.info("stopped cleanly")
        withExtendedLifetime(lock) {}
    }

    private func resolveSettings() throws -> ServerSettings {
        let sources = try common.sources(serveFlags: try Self.flags(settingArguments))
        var settings: ServerSettings
        do { settings = try sources.resolve() } catch { throw ValidationError(error.description) }
        settings.dataDirectory = common.resolvedDataDir
        if settings.resourcesDirectory == nil {
            settings.resourcesDirectory = FileManager.default.fileExists(atPath: "Resources/openapi.yaml") ? "Resources" : "/usr/share/watchdogd"
        }
        return settings
    }

    /// `--name value`, `--name=value` and lone toggles, by the table's names.
    static func flags(_ arguments: [String]) throws -> [String: [String]] {
        var flags: [String: [String]] = [:]
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            guard argument.hasPrefix("--") else { throw ValidationError("unexpected argument \(argument)") }
            let parts = argument.dropFirst(2).split(separator: "=", maxSplits: 1)
            let name = String(parts[0])
            guard let setting = SettingsTable.serve.first(where: { $0.name == name }) else {
                throw ValidationError("unknown option --\(name); see watchdogd serve --help")
            }
            if setting.kind == .toggle {
                flags[name, default: []].append(parts.count > 1 ? String(parts[1]) : "true")
            } else if parts.count > 1 {
                flags[name, default: []].append(String(parts[1]))
            } else if let value = rest.popFirst() {
                flags[name, default: []].append(value)
            } else {
                throw ValidationError("--\(name) needs a value")
            }
        }
        return flags
    }

    private func printDemoCredentials(store: any TelemetryStore, server: WatchdogServer, url: String) throws {
        let now = WatchdogServer.systemClock()
        var tokens: [String: String] = [:]
        var adminID = ""
        for (role, app, variable) in [(CredentialRole.ingest, DemoData.app as String?, "WATCHDOG_INGEST_KEY"), (.viewer, nil, "WATCHDOG_VIEWER_TOKEN"), (.admin, nil, "WATCHDOG_ADMIN_TOKEN")] {
            // Each demo start replaces the previous demo credentials rather than piling them up.
            _ = try store.revokeCredentials(id: nil, name: "demo \(role.rawValue)", atMilliseconds: now)
            let (record, token) = CredentialIssuer.issue(role: role, app: app, name: "demo \(role.rawValue)", nowMilliseconds: now)
            try store.addCredential(record)
            tokens[variable] = token
            if role == .admin { adminID = record.id }
        }
        let link = try server.signInLink(credentialID: adminID)
        emit("""
            dashboard: \(url)\(link)   (one-time sign-in link, valid 24 h)
            demo app \(DemoData.app) is ready; in a shell:
            export WATCHDOG_URL=\(url)
            export WATCHDOG_INGEST_KEY=\(tokens["WATCHDOG_INGEST_KEY"] ?? "")
            export WATCHDOG_VIEWER_TOKEN=\(tokens["WATCHDOG_VIEWER_TOKEN"] ?? "")
            export WATCHDOG_ADMIN_TOKEN=\(tokens["WATCHDOG_ADMIN_TOKEN"] ?? "")
            """)
    }
}
