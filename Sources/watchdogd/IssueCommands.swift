import ArgumentParser
import WatchdogServer

/// `watchdogd issues resolve|mute|reopen APP FINGERPRINT …`: triage of an issue from the
/// command line, on the store directly — the API's change (docs/api-alerts.md, "Triage"), by
/// `cli:<user>`, with its audit row. Prints the issue's triage after it as JSON.
struct Issues: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Resolve, mute or reopen an issue (a fingerprint of GET …/issues), with a note.",
        discussion: "Works while `serve` runs on the same data dir (or the same PostgreSQL).",
        subcommands: [Resolve.self, Mute.self, Reopen.self]
    )

    /// The app and issue every subcommand names, and the note.
    struct Target: ParsableArguments {
        @OptionGroup var common: CommonOptions

        @Argument(help: "The app's bundle id.")
        var app: String
        @Argument(help: "The issue's fingerprint, e.g. fp_0123456789abcdef.")
        var fingerprint: String
        @Option(help: "Why (at most 1,000 characters of text).")
        var note: String?

        func run(_ action: String, release: String? = nil, nextRelease: Bool = false, hours: Int? = nil, sessions: Int? = nil) throws {
            let store = try common.openStore()
            defer { try? store.close() }
            do {
                emit(try IssueTriageCommand.run(store: store, action: action, app: app, fingerprint: fingerprint, note: note, release: release,
                                                nextRelease: nextRelease, hours: hours, sessions: sessions, actor: cliActor(), now: WatchdogServer.systemClock()))
            } catch let error as APIError {
                throw CLIError(error.message)
            }
        }
    }

    struct Resolve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Resolve an issue: seen again in a listed release after the one it is resolved in, it is regressed (issue_regressed alerts).")

        @OptionGroup var target: Target
        @Option(help: "The listed release it is resolved in, VERSION (BUILD); default: the newest listed release it was seen in.")
        var release: String?
        @Flag(help: "Resolved in the next release: any release listed after today's newest counts.")
        var nextRelease = false

        func run() throws { try target.run("resolve", release: release, nextRelease: nextRelease) }
    }

    struct Mute: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Mute an issue for some hours and/or until more sessions are affected (whichever comes first); nothing fires meanwhile.")

        @OptionGroup var target: Target
        @Option(help: "For this many hours (1 to 8784, a year).")
        var hours: Int?
        @Option(help: "Until this many more sessions are affected.")
        var sessions: Int?

        func run() throws { try target.run("mute", hours: hours, sessions: sessions) }
    }

    struct Reopen: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Open an issue again: its resolution and mute are cleared.")

        @OptionGroup var target: Target

        func run() throws { try target.run("reopen") }
    }
}
