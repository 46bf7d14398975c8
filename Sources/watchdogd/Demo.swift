import ArgumentParser
import Foundation
import WatchdogServer
import WatchdogStore

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fill a data dir with generated reports and sessions, fast (no HTTP), for benchmarks and trials.",
        discussion: "Writes through the store's bulk ingest path with every roll-up, about two reports per session, over many releases, screens and devices."
    )

    @OptionGroup var common: CommonOptions

    @Option(help: "Reports to generate (about; sessions are half as many).")
    var reports: Int = 100_000

    @Option(help: "Releases to spread them over.")
    var releases: Int = 20

    @Option(help: "The app to fill (created if missing).")
    var app: String = DemoData.app

    @Option(help: "Random seed; the same seed gives the same data.")
    var seed: UInt64 = 1

    func validate() throws {
        guard (1...1_000_000_000).contains(reports) else { throw ValidationError("--reports must be from 1 to 1,000,000,000") }
        guard (1...1000).contains(releases) else { throw ValidationError("--releases must be from 1 to 1000") }
    }

    func run() throws {
        do { try AppName.validate(app) } catch { throw ValidationError(error.message) }
        let store = try common.openStore(synchronous: .normal)
        let now = WatchdogServer.systemClock()
        _ = try store.createApp(app, createdAtMilliseconds: now)
        let started = Date()
        var lastReport = Date()
        let written = try DemoData.generate(into: store, app: app, plans: DemoData.plans(reports: reports, releases: releases),
                                            nowMilliseconds: now, seed: seed) { total in
            guard Date().timeIntervalSince(lastReport) >= 2 else { return }
            lastReport = Date()
            say("\(total) reports written (\(Int(Double(total) / Date().timeIntervalSince(started))) /s)")
        }
        try (store as? SQLiteStore)?.checkpoint()
        try store.close()
        let seconds = Date().timeIntervalSince(started)
        say("wrote \(written) reports for \(app) over \(releases) releases in \(String(format: "%.1f", seconds)) s (\(Int(Double(written) / seconds)) reports/s)")
        emit(String(written))
    }
}
