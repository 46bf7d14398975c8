import ArgumentParser

@main
struct Watchdogd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watchdogd",
        abstract: "Telemetry server for the keyboard-layout watchdogs of beta iOS apps.",
        discussion: """
            Every option can also come from an environment variable WATCHDOG_<OPTION>, e.g. \
            WATCHDOG_LISTEN=0.0.0.0:8080 or WATCHDOG_DATA_DIR=/var/lib/watchdogd; a flag given on \
            the command line wins. Both can also come from a config file of such lines, like \
            deploy/watchdogd.env, given with --config FILE or WATCHDOG_CONFIG; the environment \
            wins over the file.
            """,
        version: BuildInfo.description,
        subcommands: [Serve.self, Apps.self, Releases.self, Issues.self, Tokens.self, Alerts.self, Rollouts.self, Gate.self, Backup.self, Restore.self, Store.self, Demo.self, Migrate.self, Check.self, Audit.self, SettingsCommand.self]
    )
}
