import ArgumentParser
import Foundation
import WatchdogServer

extension Apps {
    /// `watchdogd apps approvals APP [--require test_crash,rollouts,…]`: which kinds of change of
    /// an app need a second person's approval (four eyes). The CLI itself, on the server's
    /// machine, is break-glass: what it changes is audited, never proposed.
    struct Approvals: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show or set the kinds of change of an app that need a second person's approval (four eyes).",
            discussion: "Kinds: test_crash, rollouts, config, attestation, release_delete. --require '' turns approvals off.")

        @OptionGroup var common: CommonOptions
        @Argument(help: "The app (bundle id).") var app: String
        @Option(help: "The kinds, joined by commas (test_crash,rollouts,config,attestation,release_delete); empty: none.")
        var require: String?

        func run() throws {
            let store = try common.openStore()
            defer { try? store.close() }
            guard try store.appExists(app) else { throw CLIError("no app \(app)") }
            if let require {
                let names = require.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                let kinds: [ApprovalKind]
                do { kinds = try ApprovalKind.parse(names) } catch { throw ValidationError(error.message) }
                let list = kinds.map(\.rawValue)
                try audited(store, "approvals.save", app: app, after: "{\"require\": [\(list.map { "\"\($0)\"" }.joined(separator: ", "))]}") {
                    try store.saveApprovalRequirements(app: app, kinds: list)
                }
                say(list.isEmpty ? "\(app): no change needs approval" : "\(app): \(list.joined(separator: ", ")) changes need a second person's approval")
            }
            emit("{\"require\": [\(try store.approvalRequirements(app: app).map { "\"\($0)\"" }.joined(separator: ", "))]}")
        }
    }
}
