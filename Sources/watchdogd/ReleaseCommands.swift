import ArgumentParser
import WatchdogServer
import WatchdogStore
import WatchdogWire

/// `watchdogd releases add|list|admit|remove|delete APP …`: the admin API's release admission
/// from the command line, on the store directly (docs/release-health.md, "Releases: declared, admitted, unlisted").
struct Releases: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Declare, list, admit, unlist or delete an app's releases.",
        discussion: "Works while `serve` runs on the same data dir (or the same PostgreSQL).",
        subcommands: [Add.self, List.self, Admit.self, Remove.self, Delete.self]
    )

    /// The app and release every subcommand but `list` names.
    struct Target: ParsableArguments {
        @OptionGroup var common: CommonOptions

        @Argument(help: "The app's bundle id.")
        var app: String
        @Argument(help: "The release's version, e.g. 14.2.0.")
        var version: String
        @Argument(help: "The release's build, e.g. 31245.")
        var build: String

        var release: ReleaseID { ReleaseID(version: version, build: build) }

        /// The store, with the app checked; the release's listing and stats if it has them.
        func open() throws -> (store: any TelemetryStore, listing: ReleaseAdmission?, stats: ReleaseStats?) {
            let store = try common.openStore()
            guard try store.appExists(app) else { throw CLIError("no app \(app)") }
            let listing = try store.releaseAdmissions(app: app).first { $0.release == release }
            return (store, listing, try store.releaseDetail(app: app, release: release)?.stats)
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Declare a release: listed now (under strict admission, the only way to be), by \"cli\".")

        @OptionGroup var target: Target

        func run() throws {
            do { try ReportValidator.checkRelease(version: target.version, build: target.build) } catch { throw ValidationError(error.message) }
            let (store, listing, _) = try target.open()
            defer { try? store.close() }
            let now = WatchdogServer.systemClock()
            _ = try audited(store, "release.declare", app: target.app, after: "{\"release\": \(jsonQuoted(target.release.text))}") {
                try store.admitRelease(ReleaseAdmission(app: target.app, release: target.release, state: .declared, by: "cli", at: now, reason: "declared"))
            }
            say(listing?.state == .declared ? "\(target.release.text) of \(target.app) was already declared" : "declared \(target.release.text) of \(target.app)")
        }
    }

    struct Admit: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an unlisted release (it has data held apart), as an admin's decision.")

        @OptionGroup var target: Target

        func run() throws {
            let (store, listing, stats) = try target.open()
            defer { try? store.close() }
            if let listing { return say("\(target.release.text) of \(target.app) is already listed (\(listing.state.rawValue) by \(listing.by))") }
            guard stats != nil else { throw CLIError("\(target.app) has no release \(target.release.text); declare one ahead of its data with `releases add`") }
            _ = try audited(store, "release.admit", app: target.app, after: "{\"release\": \(jsonQuoted(target.release.text))}") {
                try store.admitRelease(ReleaseAdmission(app: target.app, release: target.release, state: .admitted, by: "cli",
                                                        at: WatchdogServer.systemClock(), reason: "admitted by an admin"))
            }
            say("admitted \(target.release.text) of \(target.app)")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take a release off the list; its data stays, unlisted.",
            discussion: "Under auto admission its next session start lists it again if it still has the installs and networks: delete it, or use strict, to keep it off.")

        @OptionGroup var target: Target

        func run() throws {
            let (store, _, _) = try target.open()
            defer { try? store.close() }
            guard try audited(store, "release.unlist", app: target.app, after: "{\"release\": \(jsonQuoted(target.release.text))}", { try store.unlistRelease(app: target.app, release: target.release) }) else { throw CLIError("\(target.release.text) of \(target.app) is not listed") }
            say("unlisted \(target.release.text) of \(target.app); its data stays")
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a release, listed or not, with all its data (asks for --yes).")

        @OptionGroup var target: Target

        @Flag(help: "Delete for good; without it, says what would be deleted.")
        var yes = false

        func run() throws {
            let (store, listing, stats) = try target.open()
            defer { try? store.close() }
            guard listing != nil || stats != nil else { throw CLIError("\(target.app) has no release \(target.release.text)") }
            let what = stats.map { "\($0.sessions + $0.implausibleSessions) session starts and \($0.allReports) reports" } ?? "its listing (it has no data)"
            guard yes else { throw CLIError("this would delete \(target.release.text) of \(target.app) with \(what), for good; run again with --yes") }
            let rows = try audited(store, "release.delete", app: target.app, after: "{\"release\": \(jsonQuoted(target.release.text))}") {
                try store.deleteRelease(app: target.app, release: target.release)
            }
            say("deleted \(target.release.text) of \(target.app): \(what) (\(rows) rows)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the listed releases, then the unlisted ones' totals and a page of them (most session starts first).",
            discussion: "Tab-separated lines: listed STATE BY AT VERSION BUILD SESSIONS REPORTS, then unlisted VERSION BUILD SESSIONS IMPLAUSIBLE REPORTS.")

        @OptionGroup var common: CommonOptions

        @Argument(help: "The app's bundle id.")
        var app: String
        @Option(help: "Unlisted releases to skip.")
        var offset = 0
        @Option(help: "Unlisted releases to print (at most 10000).")
        var limit = 50

        func validate() throws {
            guard offset >= 0 else { throw ValidationError("--offset must be 0 or more") }
            guard (0...10_000).contains(limit) else { throw ValidationError("--limit must be from 0 to 10000") }
        }

        func run() throws {
            let store = try common.openStore()
            defer { try? store.close() }
            guard let stats = try store.releases(app: app) else { throw CLIError("no app \(app)") }
            let byRelease = Dictionary(stats.map { ($0.release, $0) }, uniquingKeysWith: { first, _ in first })
            for listing in try store.releaseAdmissions(app: app) {
                let release = byRelease[listing.release]
                emit(["listed", listing.state.rawValue, listing.by, Timestamp.format(milliseconds: listing.at), listing.release.version, listing.release.build,
                      String(release?.sessions ?? 0), String(release?.allReports ?? 0)].joined(separator: "\t"))
            }
            let unlisted = try store.unlistedReleases(app: app, offset: offset, limit: limit)
            say("\(unlisted.total) unlisted releases held apart: \(unlisted.sessions) sessions (\(unlisted.implausibleSessions) more held apart as implausible), \(unlisted.reports) reports")
            for release in unlisted.page {
                emit(["unlisted", release.release.version, release.release.build, String(release.sessions), String(release.implausibleSessions),
                      String(release.allReports)].joined(separator: "\t"))
            }
        }
    }
}
