import Foundation
import Testing
import WatchdogSimulation
import WatchdogTesting

/// Guarded rollouts (issue 24, point 3) in the real `watchdogd` process: a simulated fleet
/// obeys `auto_fix` from its remote config, the daemon's clock is moved on by the test-only
/// clock file, and the guard's own thread (every second here) advances or rolls back.
@Suite(.serialized) struct RolloutDaemonTests {
    static let app = "com.example.mail"
    static let rule = "fix"
    static let hour: Int64 = 3_600_000

    /// A daemon whose clock the test moves, with an admin token, a rule setting `auto_fix` for
    /// 0 % of installs, and a webhook receiving the two rollout alerts.
    final class Setup {
        let daemon: Daemon
        let clockFile: URL
        let key: String
        let admin: String
        let receiver: WebhookReceiver
        let secret: String
        private(set) var offset: Int64 = 0

        init() throws {
            setenv("WATCHDOG_TEST_HOOKS", "1", 1)
            clockFile = FileManager.default.temporaryDirectory.appendingPathComponent("watchdogd-clock-\(UUID().uuidString)")
            try "0".write(to: clockFile, atomically: true, encoding: .utf8)
            daemon = try Daemon(extraArguments: ["--rollout-interval", "1", "--alert-delay", "0", "--alert-retry-base", "1", "--test-clock-file", clockFile.path])
            key = try daemon.addApp(RolloutDaemonTests.app)
            admin = try daemon.addToken(role: "admin")
            receiver = try WebhookReceiver()
            let added = try daemon.runCommand(["alerts", "hooks", "add", RolloutDaemonTests.app, "--url", receiver.url])
            secret = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let hook = try #require(try daemon.runCommand(["alerts", "hooks", "list", RolloutDaemonTests.app]).stdout.split(separator: "\t").first.map(String.init))
            for condition in ["rollout_rolled_back", "rollout_completed"] {
                #expect(try daemon.runCommand(["alerts", "rules", "add", RolloutDaemonTests.app, "--condition", condition, "--hook", hook]).status == 0)
            }
            let document: [String: Any] = ["rules": [["id": RolloutDaemonTests.rule, "name": "auto fix", "match": ["percent": 0], "set": ["auto_fix": true]]]]
            let put = try daemon.client.request("PUT", "/v1/admin/apps/\(RolloutDaemonTests.app)/config", token: admin, headers: ["Content-Type": "application/json"],
                                                body: Array(try JSONSerialization.data(withJSONObject: document)))
            #expect(put.status == 200, "\(put.text)")
        }

        deinit { try? FileManager.default.removeItem(at: clockFile) }

        /// Moves the daemon's clock on.
        func advance(hours: Int64) throws {
            offset += hours * RolloutDaemonTests.hour
            try String(offset).write(to: clockFile, atomically: true, encoding: .utf8)
        }

        func start(_ plan: [String: Any]) throws -> [String: Any] {
            let response = try daemon.client.postJSON("/v1/admin/apps/\(RolloutDaemonTests.app)/rollouts", token: admin, json: plan)
            #expect(response.status == 201, "\(response.text)")
            return response.json
        }

        func rollout() throws -> [String: Any] {
            try daemon.client.request("GET", "/v1/admin/apps/\(RolloutDaemonTests.app)/rollouts/\(RolloutDaemonTests.rule)", token: admin).json
        }

        func act(_ action: String) throws -> (status: Int, json: [String: Any]) {
            let response = try daemon.client.request("POST", "/v1/admin/apps/\(RolloutDaemonTests.app)/rollouts/\(RolloutDaemonTests.rule)/\(action)", token: admin)
            return (response.status, response.json)
        }

        /// One simulated day's sessions of 40 devices on one release (3 in 10 sessions glitch,
        /// `factor` times as many with auto_fix on).
        func day(_ variation: UInt64, factor: Double) async throws -> FleetResult {
            var plan = FleetPlan(app: RolloutDaemonTests.app, releases: [
                .init(release: .init(version: "14.2.0", build: "1", channel: "beta"), glitchProbability: 0.3),
            ], devices: 40, sessions: 400)
            plan.variation = variation
            plan.autoFixGlitchFactor = factor
            plan.lockProbability = 0
            plan.automaticLockProbability = 0
            plan.maximumBackoff = 0.5
            let endpoint = try #require(URL(string: "http://127.0.0.1:\(daemon.port)"))
            let work = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID().uuidString)")
            let result = try await Fleet.run(plan, endpoint: endpoint, ingestKey: key, workDirectory: work, deadline: Date().addingTimeInterval(120))
            // Seen once under heavy parallel load: every upload refused, the daemon gone. Say so
            // (its stderr is the test's, so a crash's backtrace is in the log above).
            #expect(result.undelivered == 0, "\(daemon.process.isRunning ? "the daemon is running" : "the daemon exited: status \(daemon.process.terminationStatus), reason \(daemon.process.terminationReason.rawValue)")")
            return result
        }

        /// Waits (bounded: a limit on failure, not a measure) until the guard looked after the
        /// clock's last move, the ingest of the day is counted and a step it decided is applied
        /// (the look is saved with the step pending, then the config version made: a loaded CI
        /// run read the rollout in between, at the old percentage, and the step's start went
        /// unseen); the rollout then.
        func look() throws -> [String: Any] {
            let since = WatchdogServerClock.now() + offset - 1_000
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                let rollout = try rollout()
                let lookAt = ((rollout["last_look"] as? [String: Any])?["at"] as? String).flatMap(WatchdogServerClock.parse) ?? 0
                let stepAt = (rollout["history"] as? [[String: Any]])?.last.flatMap { ($0["at"] as? String).flatMap(WatchdogServerClock.parse) } ?? 0
                let pending = rollout["pending"].map { !($0 is NSNull) } ?? false
                if (max(lookAt, stepAt) >= since && !pending) || rollout["status"] as? String != "active" { return rollout }
                usleep(100_000)
            }
            return try rollout()
        }
    }

    static func steps(_ rollout: [String: Any]) -> [(action: String, to: Double, by: String, version: Int?)] {
        (rollout["history"] as? [[String: Any]] ?? []).map {
            ($0["action"] as? String ?? "", $0["to_percent"] as? Double ?? -1, $0["actor"] as? String ?? "", $0["config_version"] as? Int)
        }
    }

    @Test func anAutoFixThatHalvesGlitchesReachesEveryStepAndResumesAfterARestart() async throws {
        let setup = try Setup()
        let started = try setup.start(["rule": Self.rule, "steps": [10, 25, 50, 100], "minimum_sessions": 30, "minimum_hours": 6,
                                       "guard": ["overall": true, "kinds": ["view_frame_mismatch"]]])
        #expect(started["status"] as? String == "active" && started["percent"] as? Double == 10)
        var current = 10.0
        var stepped = true
        var restarted = false
        for day in 0..<8 {
            _ = try await setup.day(UInt64(day), factor: 0.5)
            // A step just began: sessions, but too little time at it, take no step.
            let early = try setup.look()
            if stepped { #expect(early["percent"] as? Double == current, "\(early["last_look"] ?? "")") }
            try setup.advance(hours: 7)
            let rollout = try setup.look()
            let percent = rollout["percent"] as? Double ?? -1
            stepped = percent != current
            current = percent
            if rollout["status"] as? String == "completed" { break }
            if percent == 25, !restarted {
                // A restart in the middle: the plan resumes at its step, from the store.
                restarted = true
                try setup.daemon.restart()
                let after = try setup.rollout()
                #expect(after["percent"] as? Double == 25 && after["step"] as? Int == 1 && after["status"] as? String == "active")
            }
        }
        let rollout = try setup.rollout()
        #expect(rollout["status"] as? String == "completed", "\(rollout["last_look"] ?? "")")
        #expect(restarted)
        let steps = Self.steps(rollout)
        #expect(steps.map(\.action) == ["started", "advanced", "advanced", "completed"], "\(steps)")
        #expect(steps.map(\.to) == [10, 25, 50, 100])
        #expect(steps.dropFirst().allSatisfy { $0.by == "rollout-guard" })
        // Every step is a config version in the history, by the guard, with its evidence.
        let history = try setup.daemon.client.request("GET", "/v1/admin/apps/\(Self.app)/config/history", token: setup.admin).json["history"] as? [[String: Any]] ?? []
        let guardVersions = history.filter { $0["changed_by"] as? String == "rollout-guard" }
        #expect(guardVersions.count == 3)
        #expect(guardVersions.allSatisfy { ($0["note"] as? String ?? "").contains("`14.2.0 (1)`: matched") })
        #expect(Set(steps.compactMap(\.version)) == Set(history.compactMap { $0["version"] as? Int }.filter { $0 > 1 }))
        // The fleet runs on the last version: everyone has auto_fix.
        let last = try await setup.day(99, factor: 0.5)
        #expect(last.devicesWithAutoFix == 40 && last.configVersions == [steps.last?.version ?? -1])
        #expect(AlertDaemonTests.eventually { setup.receiver.received.contains { ($0.json["alert"] as? [String: Any])?["condition"] as? String == "rollout_completed" } })
        let alerts = setup.receiver.received.compactMap { ($0.json["alert"] as? [String: Any])?["condition"] as? String }
        #expect(alerts == ["rollout_completed"], "\(alerts)")
        #expect(setup.daemon.stop() == 0)
    }

    @Test func anAutoFixThatDoublesGlitchesIsRolledBackBefore25PercentOnceAndDevicesReceiveIt() async throws {
        let setup = try Setup()
        _ = try setup.start(["rule": Self.rule, "steps": [10, 25, 50, 100], "minimum_sessions": 30, "minimum_hours": 6,
                             "guard": ["overall": false, "kinds": ["view_frame_mismatch"]]])
        // A device the rule switched at 10 %: its config, and its ETag, before the rollback.
        func config(_ install: String) throws -> Response {
            try setup.daemon.client.request("GET", "/v1/config?app=\(Self.app)&version=14.2.0&build=1&install_id=\(install)", token: setup.key)
        }
        let switched = try #require(try (0..<40).map { "sim-1-\($0)" }.first { try config($0).text.contains(#""auto_fix":true"#) })
        let before = try config(switched)
        var rollout: [String: Any] = [:]
        for day in 0..<8 {
            _ = try await setup.day(UInt64(100 + day), factor: 2)
            try setup.advance(hours: 7)
            rollout = try setup.look()
            if rollout["status"] as? String != "active" { break }
        }
        #expect(rollout["status"] as? String == "rolled_back", "\(rollout["last_look"] ?? "")")
        let steps = Self.steps(rollout)
        #expect(steps.allSatisfy { $0.to <= 25 }, "\(steps)")
        #expect(steps.last?.action == "rolled_back" && steps.last?.to == 0 && steps.last?.by == "rollout-guard")
        // The rollback is a config version by the guard, with the evidence in its note.
        let version = try #require(steps.last?.version)
        let change = try setup.daemon.client.request("GET", "/v1/admin/apps/\(Self.app)/config/history/\(version)", token: setup.admin).json
        print("rollback at \(steps.last?.by ?? ""): config version \(version): \(change["note"] ?? "")")
        #expect(change["changed_by"] as? String == "rollout-guard")
        #expect((change["note"] as? String ?? "").contains("`view_frame_mismatch` regressed in `14.2.0 (1)`"), "\(change["note"] ?? "")")
        let after = try config(switched)
        #expect(after.headers["etag"] != nil && after.headers["etag"] != before.headers["etag"])
        let body = after.text
        #expect(!body.contains(#""auto_fix":true"#), "\(body)")
        #expect(after.headers["x-config-version"] == String(version))
        // Devices take it: nobody runs auto_fix any more.
        let next = try await setup.day(200, factor: 2)
        #expect(next.devicesWithAutoFix == 0 && next.configVersions == [version])
        // One alert, signed, however many passes run after it.
        #expect(AlertDaemonTests.eventually { !setup.receiver.received.isEmpty })
        try setup.advance(hours: 24)
        usleep(3_000_000)
        let received = setup.receiver.received
        #expect(received.count == 1, "\(received.map(\.json))")
        #expect(received.allSatisfy { $0.isSigned(with: setup.secret) })
        let alert = received.first?.json["alert"] as? [String: Any]
        #expect(alert?["condition"] as? String == "rollout_rolled_back")
        #expect((alert?["rollout"] as? [String: Any])?["status"] as? String == "rolled_back")
        #expect(setup.daemon.stop() == 0)
    }

    @Test func aPausedRolloutStaysPutAndAnAbortPutsTheRuleBackAtZero() async throws {
        let setup = try Setup()
        _ = try setup.start(["rule": Self.rule, "steps": [10, 50, 100], "minimum_sessions": 30, "minimum_hours": 6])
        // Paused with the CLI, which goes through the running server's API.
        let cli = try ChildProcess.run(Daemon.binary, ["rollouts", "act", "pause", Self.app, Self.rule, "--url", "http://127.0.0.1:\(setup.daemon.port)", "--token", setup.admin],
                                       seconds: Daemon.commandSeconds)
        #expect(cli.status == 0 && cli.stdout.contains(#""status":"paused""#), "\(cli.stdout)")
        #expect(try setup.rollout()["status"] as? String == "paused")
        #expect(try setup.act("pause").status == 409)
        for day in 0..<2 {
            _ = try await setup.day(UInt64(300 + day), factor: 0.5)
            try setup.advance(hours: 24)
        }
        usleep(3_000_000)  // three passes of the guard
        var rollout = try setup.rollout()
        #expect(rollout["percent"] as? Double == 10 && rollout["status"] as? String == "paused", "however much evidence, no step while paused")
        #expect(try setup.act("resume").json["status"] as? String == "active")
        try setup.advance(hours: 1)
        rollout = try setup.look()
        #expect(rollout["percent"] as? Double == 50, "resumed, the evidence gathered meanwhile advances it: \(rollout)")
        let aborted = try setup.act("abort")
        #expect(aborted.status == 200 && aborted.json["status"] as? String == "aborted" && aborted.json["percent"] as? Double == 0)
        #expect(Self.steps(aborted.json).last.map { $0.action == "aborted" && $0.by == "test" } == true)
        let config = try setup.daemon.client.request("GET", "/v1/admin/apps/\(Self.app)/config", token: setup.admin).json
        let rule = (config["rules"] as? [[String: Any]])?.first
        #expect((rule?["match"] as? [String: Any])?["percent"] as? Double == 0 && config["updated_by"] as? String == "test")
        #expect(try setup.act("resume").status == 409)
        // test_crash is never rolled out by a guard.
        let crash = try setup.daemon.client.request("PATCH", "/v1/admin/apps/\(Self.app)/config", token: setup.admin, headers: ["Content-Type": "application/json"],
                                                    body: Array(#"{"rules": [{"id": "crash", "match": {"percent": 1}, "set": {"test_crash": true}}]}"#.utf8))
        #expect(crash.status == 200, "\(crash.text)")
        let refused = try setup.daemon.client.postJSON("/v1/admin/apps/\(Self.app)/rollouts", token: setup.admin, json: ["rule": "crash"])
        #expect(refused.status == 400 && (refused.json["error"] as? [String: Any])?["code"] as? String == "rollout_not_allowed", "\(refused.text)")
        #expect(setup.daemon.stop() == 0)
    }
}

extension RolloutDaemonTests {
    @Test func aPercentSetByHandEndsTheRolloutAndTheTestClockNeedsItsFlag() throws {
        let setup = try Setup()
        _ = try setup.start(["rule": Self.rule, "steps": [10, 100]])
        let patch = try setup.daemon.client.request("PATCH", "/v1/admin/apps/\(Self.app)/config", token: setup.admin, headers: ["Content-Type": "application/json"],
                                                    body: Array(#"{"rules": [{"id": "fix", "name": "auto fix", "match": {"percent": 30}, "set": {"auto_fix": true}}]}"#.utf8))
        #expect(patch.status == 200, "\(patch.text)")
        #expect(try AlertDaemonTests.eventually(30) { try setup.rollout()["status"] as? String == "aborted" })
        let last = (try setup.rollout()["history"] as? [[String: Any]])?.last
        #expect((last?["reason"] as? String ?? "").contains("set by hand") && last?["actor"] as? String == "rollout-guard", "\(last ?? [:])")
        let rules = try setup.daemon.client.request("GET", "/v1/admin/apps/\(Self.app)/config", token: setup.admin).json["rules"] as? [[String: Any]]
        #expect((rules?.first?["match"] as? [String: Any])?["percent"] as? Double == 30, "the person's percentage stays")
        #expect(setup.daemon.stop() == 0)

        // The movable clock is refused without the test flag in the environment.
        var environment = ProcessInfo.processInfo.environment
        environment["WATCHDOG_TEST_HOOKS"] = nil
        let refused = try ChildProcess.run(Daemon.binary, ["serve", "--listen", "127.0.0.1:0", "--data-dir", setup.daemon.dataDir.path,
                                                           "--test-clock-file", setup.clockFile.path] + (try setup.daemon.storeArguments()),
                                           environment: environment, seconds: Daemon.commandSeconds)
        #expect(refused.status != 0 && refused.stderr.contains("for tests only"), "\(refused.stderr)")
    }
}

/// The daemon's clock as the tests read it (the system's; the daemon adds the clock file's offset).
enum WatchdogServerClock {
    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    static func parse(_ text: String) -> Int64? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
    }
}
