import ArgumentParser
import Foundation
import WatchdogServer
import WatchdogStore

extension Apps {
    /// `watchdogd apps attestation APP [--mode off|observe|require] [--team-id …] [--bundle-id …]
    /// [--environment development|production|both]`: shows or changes whether the app's uploads must
    /// come from attested installs (docs/security.md, "Attested installs").
    struct Attestation: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show or change whether an app's uploads must come from App Attest-attested installs.",
            discussion: "Without options, prints the settings as JSON. A running serve applies a change within 10 seconds."
        )

        @OptionGroup var common: CommonOptions

        @Argument(help: "The app's bundle id (its name in watchdogd).")
        var app: String

        @Option(help: "off, observe (unattested uploads stored; views can leave them out) or require (refused).")
        var mode: String?
        @Option(help: "The Apple Developer team id (10 characters).")
        var teamID: String?
        @Option(help: "The bundle id the app is signed with (the RP id is TEAMID.bundle.id).")
        var bundleID: String?
        @Option(help: "development (development-signed builds), production (TestFlight, App Store) or both (the two side by side; each key keeps its own).")
        var environment: String?

        func run() throws {
            let store = try common.openStore()
            defer { try? store.close() }
            guard try store.appExists(app) else { throw CLIError("no app \(app)") }
            var settings = try store.attestationSettings(app: app).flatMap(AttestationSettings.decoded) ?? AttestationSettings()
            if mode != nil || teamID != nil || bundleID != nil || environment != nil {
                if let mode {
                    guard let value = AttestationSettings.Mode(rawValue: mode) else { throw ValidationError("--mode must be off, observe or require, got \(mode)") }
                    settings.mode = value
                }
                if let environment {
                    guard let value = AttestationSettings.Environment(rawValue: environment) else {
                        throw ValidationError("--environment must be development, production or both, got \(environment)")
                    }
                    settings.environment = value
                }
                if let teamID { settings.teamID = teamID }
                if let bundleID { settings.bundleID = bundleID }
                do { try settings.validate() } catch { throw ValidationError(error.message) }
                try audited(store, "attestation.save", app: app, after: settings.json) { try store.saveAttestationSettings(app: app, json: settings.json) }
                say("saved the attestation settings of \(app)")
            }
            emit(settings.json)
        }
    }
}
