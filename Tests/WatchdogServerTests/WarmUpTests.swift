import Foundation
import GRDB
import Testing
@testable import WatchdogServer
@testable import WatchdogStore
import WatchdogTesting

/// A start fills the per-release caches before listening (`WatchdogApplication.warmUp`), so the
/// first `/releases` after a restart does not compute every release's install concentration
/// while someone waits.
@Suite struct WarmUpTests {
    /// Three releases, each with reports from three installs, one of them noisy.
    static func populated() throws -> (TestApplication, viewer: String) {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        for version in ["14.0.0", "14.1.0", "14.2.0"] {
            var reports: [[String: Any]] = []
            for (install, count) in [("I-1", 1), ("I-2", 1), ("I-3", 6)] {
                for _ in 0..<count {
                    var report = try Fixtures.freshReport(version: version)
                    report["install_id"] = install
                    reports.append(report)
                }
            }
            #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": reports]).status == 202)
        }
        return (app, try app.addToken(role: "viewer"))
    }

    static func installs(_ app: TestApplication, viewer: String) throws -> [String: Int] {
        let releases = try app.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer).json["releases"] as? [[String: Any]] ?? []
        var installs: [String: Int] = [:]
        for release in releases {
            installs[release["version"] as? String ?? "?"] = (release["concentration"] as? [String: Any])?["installs"] as? Int
        }
        return installs
    }

    @Test(.enabled(if: TestStore.isSQLite, "edits the SQLite file behind the server")) func aStartComputesEveryReleasesFiguresBeforeTheFirstRequest() throws {
        let (app, viewer) = try Self.populated()
        try app.restart()
        let warmed = app.application.warmUp(for: 10_000_000_000)
        #expect(warmed.apps == 1)
        #expect(warmed.releases == 3)
        #expect(warmed.complete)

        // The per-install rows go away behind the server's back, release counters unchanged:
        // the answer still shows what the warm-up computed, so the request did not recompute.
        try app.sqlite.pool.write { db in try db.execute(sql: "DELETE FROM release_installs") }
        #expect(try Self.installs(app, viewer: viewer) == ["14.0.0": 3, "14.1.0": 3, "14.2.0": 3])

        // Without the warm-up the same request computes from what is left.
        try app.restart()
        #expect(try Self.installs(app, viewer: viewer) == ["14.0.0": 0, "14.1.0": 0, "14.2.0": 0])
    }

    @Test func theWarmUpStopsAtItsTimeLimit() throws {
        let (app, _) = try Self.populated()
        try app.restart()
        let warmed = app.application.warmUp(for: 0)
        #expect(warmed.releases == 0)
        #expect(!warmed.complete)
    }
}
