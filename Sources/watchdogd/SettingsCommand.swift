import ArgumentParser
import WatchdogServer

/// `watchdogd settings`: the configuration reference (docs/configuration.md), from the table
/// `serve` reads its settings with.
struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Print the configuration reference (Markdown): every setting of serve, its variable and default.",
        discussion: "docs/configuration.md is this output: watchdogd settings > docs/configuration.md"
    )

    func run() throws {
        print(SettingsReference.markdown(), terminator: "")
    }
}
