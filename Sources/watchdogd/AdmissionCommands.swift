import ArgumentParser
import Foundation
import WatchdogServer
import WatchdogStore

extension Apps {
    /// `watchdogd apps admission APP [--mode …] [--minimum-installs N] …`: shows or changes how
    /// the app's releases are listed and its session limits (docs/security.md, "What a holder of the
    /// ingest key can do").
    struct Admission: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show or change an app's release admission and session limits.",
            discussion: "Without options, prints the settings as JSON. A running serve applies a change within 10 seconds."
        )

        @OptionGroup var common: CommonOptions

        @Argument(help: "The app's bundle id.")
        var app: String

        @Option(help: "auto, strict or open (open also turns every limit off).")
        var mode: String?
        @Option(help: "auto: distinct installs with counted sessions a release needs.")
        var minimumInstalls: Int?
        @Option(help: "auto: distinct networks (IPv4 /24, IPv6 /48) a release needs.")
        var minimumNetworks: Int?
        @Option(help: "auto: releases admitted without a declaration in any 24 hours.")
        var releasesPerDay: Int?
        @Option(help: "Session starts per install per hour that count (0: no limit).")
        var sessionsPerInstallPerHour: Int?
        @Option(help: "New installs per network per hour that count (0: no limit).")
        var newInstallsPerNetworkPerHour: Int?
        @Option(help: "Hours before its arrival a session start may be and count (0: no limit).")
        var maximumSessionAgeHours: Int?
        @Option(help: "Verdicts read unreliable when the top 1 % of installs hold more than this share of a side's sessions (1: never).")
        var maximumTopInstallsShare: Double?
        @Option(help: "… when one network holds more than this share (1: never).")
        var maximumNetworkShare: Double?
        @Option(help: "… when one hour holds more than this share (1: never).")
        var maximumHourShare: Double?
        @Option(help: "A release neither declared nor reaching this share of the compared release's networks is no default base, not watched by alerts and not in a rollout's evidence (0: any).")
        var minimumReachShare: Double?
        @Option(help: "true: verdicts weigh each side by network, each network's weight bounded; false: by install, unbounded (testers all on one network).")
        var weighByNetwork: Bool?

        func run() throws {
            let store = try common.openStore()
            defer { try? store.close() }
            guard try store.appExists(app) else { throw CLIError("no app \(app)") }
            var settings = try store.admissionSettings(app: app).flatMap(AdmissionSettings.decoded) ?? AdmissionSettings()
            let changing = [mode != nil, minimumInstalls != nil, minimumNetworks != nil, releasesPerDay != nil, sessionsPerInstallPerHour != nil,
                            newInstallsPerNetworkPerHour != nil, maximumSessionAgeHours != nil, maximumTopInstallsShare != nil,
                            maximumNetworkShare != nil, maximumHourShare != nil, minimumReachShare != nil, weighByNetwork != nil].contains(true)
            if changing {
                if let mode { settings = mode == "open" ? .open : { var copy = settings; copy.mode = mode; return copy }() }
                if let minimumInstalls { settings.minimumInstalls = minimumInstalls }
                if let minimumNetworks { settings.minimumNetworks = minimumNetworks }
                if let releasesPerDay { settings.releasesPerDay = releasesPerDay }
                if let sessionsPerInstallPerHour { settings.sessionsPerInstallPerHour = sessionsPerInstallPerHour }
                if let newInstallsPerNetworkPerHour { settings.newInstallsPerNetworkPerHour = newInstallsPerNetworkPerHour }
                if let maximumSessionAgeHours { settings.maximumSessionAgeHours = maximumSessionAgeHours }
                if let maximumTopInstallsShare { settings.maximumTopInstallsShare = maximumTopInstallsShare }
                if let maximumNetworkShare { settings.maximumNetworkShare = maximumNetworkShare }
                if let maximumHourShare { settings.maximumHourShare = maximumHourShare }
                if let minimumReachShare { settings.minimumReachShare = minimumReachShare }
                if let weighByNetwork { settings.weighByNetwork = weighByNetwork }
                do { try settings.validate() } catch { throw ValidationError(error.message) }
                try audited(store, "admission.save", app: app, after: settings.json) { try store.saveAdmissionSettings(app: app, json: settings.json) }
                say("saved the admission settings of \(app)")
            }
            emit(settings.json)
        }

        /// The settings `apps add --admission NAME` starts an app with.
        static func named(_ name: String) throws -> AdmissionSettings {
            switch name {
            case "open": return .open
            case "auto", "strict":
                var settings = AdmissionSettings()
                settings.mode = name
                return settings
            default: throw ValidationError("--admission must be auto, strict or open, got \(name)")
            }
        }
    }
}
