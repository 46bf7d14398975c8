import Foundation
import Testing
import WatchdogTesting

/// A beta fleet on 400 different /24 networks, and an attacker on networks of its own, posting
/// to a real daemon from loopback source addresses (every 127.x.y.z is loopback on Linux, so
/// each network is a socket address of its own: no proxy header involved). Issue 39.
///
/// Honest network i is 127.(1 + i / 200).(i % 200).0/24 and holds one install per release, each
/// starting `sessionsPerInstall` sessions spread over the last six days of the daemon's clock;
/// the first `affected` installs of a release glitch in one of their sessions. The attacker's
/// network j is 127.100.j.0/24.
struct NetworkFleet {
    static let networks = 400
    static let sessionsPerInstall = 3
    static let hour: TimeInterval = 3600

    let daemon: Daemon
    let app: String
    let key: String
    /// The daemon's movable clock, when it has one.
    var clock: ClockFile? = nil

    static func honest(_ network: Int) -> String { "127.\(1 + network / 200).\(network % 200).7" }
    static func attacker(_ network: Int) -> String { "127.100.\(network).9" }

    /// The daemon's clock now.
    var now: Date { Date().addingTimeInterval(Double(clock?.offset ?? 0) / 1000) }

    /// Posts `json` to `path` from `address`; expects 202.
    @discardableResult
    func post(_ path: String, from address: String, _ json: [String: Any]) throws -> Response {
        let answer = try daemon.client.from(address).request("POST", path, token: key, headers: ["Content-Type": "application/json"],
                                                              body: Array(try JSONSerialization.data(withJSONObject: json)))
        #expect(answer.status == 202, "\(answer.text)")
        return answer
    }

    func session(version: String, install: String, startedAt: Date) -> [String: Any] {
        var session = Fixtures.session(app: app, version: version, build: "1")
        session["install_id"] = install
        session["started_at"] = ISO8601DateFormatter().string(from: startedAt)
        return session
    }

    func report(version: String, install: String, session: String, kind: String = "view_frame_mismatch") throws -> [String: Any] {
        var report = try Fixtures.freshReport(app: app, version: version, build: "1", kind: kind, sessionID: session)
        report["install_id"] = install
        return report
    }

    /// The install id of release `version` on honest network `network`.
    static func install(_ version: String, _ network: Int) -> String { "I-\(version)-\(network)" }

    /// The honest fleet: for each release, one install per network, the first `affected`
    /// installs with one glitching session.
    func postHonest(_ releases: [(version: String, affected: Int)]) throws {
        try postHonest(releases.map(\.version)) { version, network in network < (releases.first { $0.version == version }?.affected ?? 0) ? 1 : 0 }
    }

    /// The honest fleet: for each of `versions`, one install per network, whose first
    /// `glitching(version, network)` sessions glitch.
    func postHonest(_ versions: [String], glitching: (String, Int) -> Int) throws {
        let now = self.now
        for network in 0..<Self.networks {
            var starts: [[String: Any]] = [], reports: [[String: Any]] = []
            for version in versions {
                let install = Self.install(version, network)
                for index in 0..<Self.sessionsPerInstall {
                    let hoursAgo = Double((network * Self.sessionsPerInstall + index) % 144)
                    let start = session(version: version, install: install, startedAt: now.addingTimeInterval(-hoursAgo * Self.hour - 60))
                    starts.append(start)
                    if index < glitching(version, network) {
                        reports.append(try report(version: version, install: install, session: start["id"] as? String ?? ""))
                    }
                }
            }
            try post("/v1/sessions", from: Self.honest(network), ["sessions": starts])
            if !reports.isEmpty { try post("/v1/reports", from: Self.honest(network), ["reports": reports]) }
        }
    }

    /// One attacker network at the caps for one hour: `installs` new installs (20: the
    /// new-installs cap) × `sessions` sessions each (20: the per-install cap), started a
    /// minute ago (or at `startedAt`; with `spread`, dated over the last six days as the
    /// fleet's are, so that no hour holds them), every one glitching when `glitching`. The
    /// install ids are `prefix`-network-0…; returns the session ids.
    @discardableResult
    func forge(network: Int, version: String, prefix: String, installs: Int = 20, sessions: Int = 20, glitching: Bool,
               startedAt: Date? = nil, spread: Bool = false, installIDs: [String]? = nil) throws -> [String] {
        let now = self.now
        let ids = installIDs ?? (0..<installs).map { "\(prefix)-\(network)-\($0)" }
        let starts = ids.enumerated().flatMap { index, install in
            (0..<sessions).map { session in
                let hoursAgo = spread ? Double((network * 37 + index * sessions + session) % 140) : 0
                return self.session(version: version, install: install, startedAt: startedAt ?? now.addingTimeInterval(-hoursAgo * Self.hour - 60))
            }
        }
        for chunk in stride(from: 0, to: starts.count, by: 500) {
            try post("/v1/sessions", from: Self.attacker(network), ["sessions": Array(starts[chunk..<min(chunk + 500, starts.count)])])
        }
        if glitching {
            let reports = try starts.map { try report(version: version, install: $0["install_id"] as? String ?? "", session: $0["id"] as? String ?? "") }
            for chunk in stride(from: 0, to: reports.count, by: 500) {
                try post("/v1/reports", from: Self.attacker(network), ["reports": Array(reports[chunk..<min(chunk + 500, reports.count)])])
            }
        }
        return starts.compactMap { $0["id"] as? String }
    }

    /// `GET …/compare` of the two releases (`interval`: fixed or sequential).
    func compare(base: String, target: String, viewer: String, interval: String = "sequential") throws -> [String: Any] {
        let answer = try daemon.client.request("GET", "/v1/apps/\(app)/compare?base=\(base)&target=\(target)&interval=\(interval)", token: viewer)
        #expect(answer.status == 200, "\(answer.text)")
        return answer.json
    }

    /// `watchdogd gate` for `release` (against its default base unless `against`).
    func gate(release: String, against: String? = nil, viewer: String) throws -> (status: Int32, stdout: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["WATCHDOG_TOKEN"] = viewer
        let result = try ChildProcess.run(Daemon.binary, ["gate", "--url", "http://127.0.0.1:\(daemon.port)", "--app", app, "--release", release]
                                              + (against.map { ["--against", $0] } ?? []), environment: environment, seconds: Daemon.commandSeconds)
        return (result.status, result.stdout)
    }

    static func overall(_ compare: [String: Any]) -> [String: Any] { compare["overall"] as? [String: Any] ?? [:] }

    /// Whether config rule `rule` switches `install` on 14.2.0 (`auto_fix` on): what a holder of
    /// the ingest key learns from `GET /v1/config`.
    func switched(_ install: String, version: String = "14.2.0") throws -> Bool {
        let answer = try daemon.client.request("GET", "/v1/config?app=\(app)&version=\(version)&build=1&install_id=\(install)", token: key)
        #expect(answer.status == 200, "\(answer.text)")
        return answer.text.contains(#""auto_fix":true"#)
    }
}

/// The daemon's movable clock (`--test-clock-file`, honoured only with `WATCHDOG_TEST_HOOKS=1`):
/// the system clock plus `offset` milliseconds, moved by the test.
final class ClockFile {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("watchdogd-clock-\(UUID().uuidString)")
    private(set) var offset: Int64 = 0

    init() throws {
        try "0".write(to: url, atomically: true, encoding: .utf8)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    var arguments: [String] { ["--test-clock-file", url.path] }
    static let environment = ["WATCHDOG_TEST_HOOKS": "1"]

    /// Moves the daemon's clock on, and returns once the daemon reads it: an app it creates
    /// is created at the moved time (bounded wait: a limit on failure, not a measure).
    func advance(hours: Int64, _ daemon: Daemon, admin: String) throws {
        offset += hours * 3_600_000
        try String(offset).write(to: url, atomically: true, encoding: .utf8)
        let moved = Int64((Date().timeIntervalSince1970 * 1000).rounded()) + offset - 1_000
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let probe = "clock.probe.\(UUID().uuidString.prefix(8).lowercased())"
            #expect(try daemon.client.postJSON("/v1/admin/apps", token: admin, json: ["app": probe]).status == 201)
            let apps = try daemon.client.request("GET", "/v1/apps", token: admin).json["apps"] as? [[String: Any]] ?? []
            let created = apps.first { $0["app"] as? String == probe }.flatMap { ($0["created_at"] as? String).flatMap(WatchdogServerClock.parse) } ?? 0
            if created >= moved { return }
            usleep(50_000)
        }
        Issue.record("the daemon did not read its clock file within 30 s")
    }
}
