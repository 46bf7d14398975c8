import Foundation
import WatchdogKit
import WatchdogWire

/// What a simulated fleet does: which releases, how often each glitches, how many sessions.
public struct FleetPlan: Sendable {
    public struct ReleasePlan: Sendable {
        public var release: Release
        /// Chance that a session's keyboard-dependent view ends up misplaced.
        public var glitchProbability: Double

        public init(release: Release, glitchProbability: Double) {
            self.release = release
            self.glitchProbability = glitchProbability
        }
    }

    public var app: String
    public var releases: [ReleasePlan]
    /// Simulated devices (installs) running at once.
    public var devices: Int
    /// Sessions in all, spread over the devices.
    public var sessions: Int
    /// Chance a session includes a switch to another app (foreign keyboard notifications).
    public var appSwitchProbability: Double = 0.2
    /// Chance an iPad session goes through Split View: the window narrows (no keyboard
    /// notification), the other app's keyboard comes and goes (`isLocal == false`), the window
    /// widens again.
    public var splitViewProbability: Double = 0.3
    /// Chance a session includes a navigation lock longer than the threshold, reported by the
    /// host (`agent.locks`).
    public var lockProbability: Double = 0.05
    /// Chance a session includes a transition that never completes (a push, or a cancelled
    /// interactive pop, whose coordinator stays), found by automatic lock detection alone.
    /// Every session also runs transitions that complete in time, which must not be reported.
    public var automaticLockProbability: Double = 0.05
    /// Chance a session is typed on a hardware keyboard with an input accessory view: iPads
    /// show the shortcut bar and the accessory (99 pt), iPhones only the accessory (44 pt), the
    /// keyboard frame mostly below the screen.
    public var hardwareKeyboardProbability: Double = 0.15
    /// Share of devices whose compose screen sits in a tab bar controller: its composer belongs
    /// above the tab bar while the keyboard is down (judged in the screen's view, not the window).
    public var tabBarProbability: Double = 0.5
    /// Share of iPads running two windows of the app side by side: the keyboard belongs to the
    /// window with the first responder (which moves between them), and the other one's composer
    /// stays down — every keyboard notification reaching both windows.
    public var twoWindowProbability: Double = 0.5
    public var seed: UInt64 = 1
    /// Mixed into each device's random numbers but not its install id: the same fleet run
    /// again (the next simulated day) with fresh sessions and glitches.
    public var variation: UInt64 = 0
    /// A device whose remote config has `auto_fix` on glitches this many times as often (0.5:
    /// the fix halves misplaced views, 2: it doubles them) — what a guarded rollout of
    /// `auto_fix` is to find out.
    public var autoFixGlitchFactor: Double = 1
    /// Longest backoff between upload attempts, seconds (small for tests and demos).
    public var maximumBackoff: Double = 2
    /// Upload after every this many sessions (and at the end).
    public var uploadEvery: Int = 5
    /// Seconds each device waits between sessions (0: as fast as possible).
    public var sessionPause: Double = 0
    /// Every device opts in to App Attest with this service (docs/security.md, "Attested installs"):
    /// it attests a key once and signs its uploads. `nil`: uploads go unattested.
    public var appAttest: (any AppAttestService)?

    public init(app: String, releases: [ReleasePlan], devices: Int, sessions: Int) {
        self.app = app
        self.releases = releases
        self.devices = devices
        self.sessions = sessions
    }

    /// Two releases of a mail app, the older with four times the glitches of the newer.
    public static func twoReleases(app: String, devices: Int, sessions: Int) -> FleetPlan {
        FleetPlan(app: app, releases: [
            ReleasePlan(release: Release(version: "14.1.0", build: "31102", channel: "beta"), glitchProbability: 0.4),
            ReleasePlan(release: Release(version: "14.2.0", build: "31245", channel: "beta"), glitchProbability: 0.1),
        ], devices: devices, sessions: sessions)
    }
}

/// What a fleet produced, to compare with what the server counted.
public struct FleetResult: Sendable, Equatable {
    /// Session starts per release (`version (build)`).
    public var sessions: [String: Int] = [:]
    /// Reports the watchdogs produced (saved to their outboxes), per release.
    public var reports: [String: Int] = [:]
    /// Items still waiting in outboxes when the run ended (0 when everything was delivered).
    public var undelivered = 0
    /// Test crashes the devices went through.
    public var testCrashes = 0
    /// Reports a correct watchdog makes of what the devices did, per release: one per
    /// misplaced-view episode and per long lock — no false glitches from other apps' keyboards,
    /// app switches or window changes.
    public var expectedReports: [String: Int] = [:]
    /// Devices told "ingest key refused" by their uploader (the key was revoked meanwhile).
    public var devicesRefused = 0
    /// Of `expectedReports`: glitches while a hardware keyboard was up (keyboard mode
    /// `hardware`), and locks only automatic detection could find.
    public var expectedHardwareKeyboardReports = 0
    public var expectedAutomaticLockReports = 0
    /// Of `expectedReports`: the misplaced composers (`view_frame_mismatch`), the rest are locks.
    public var expectedViewReports = 0
    /// The config versions devices ran their sessions under, and how many devices had `auto_fix` on.
    public var configVersions: Set<Int> = []
    public var devicesWithAutoFix = 0
    /// Devices whose composer sits above a tab bar, and iPads running two windows.
    public var devicesWithTabBar = 0
    public var devicesWithTwoWindows = 0

    public var totalSessions: Int { sessions.values.reduce(0, +) }
    public var totalReports: Int { reports.values.reduce(0, +) }
    public var totalExpectedReports: Int { expectedReports.values.reduce(0, +) }

    mutating func merge(_ other: FleetResult) {
        sessions.merge(other.sessions, uniquingKeysWith: +)
        reports.merge(other.reports, uniquingKeysWith: +)
        undelivered += other.undelivered
        testCrashes += other.testCrashes
        expectedReports.merge(other.expectedReports, uniquingKeysWith: +)
        devicesRefused += other.devicesRefused
        expectedHardwareKeyboardReports += other.expectedHardwareKeyboardReports
        expectedAutomaticLockReports += other.expectedAutomaticLockReports
        expectedViewReports += other.expectedViewReports
        configVersions.formUnion(other.configVersions)
        devicesWithAutoFix += other.devicesWithAutoFix
        devicesWithTabBar += other.devicesWithTabBar
        devicesWithTwoWindows += other.devicesWithTwoWindows
    }
}

/// A key rotation in the middle of a run: after `revokeAfter` sessions (in all) the key in use
/// is revoked — uploads get 401 and outboxes keep everything — and after `replaceAfter`
/// sessions a new key is issued and given to every device, which then delivers all of it.
public struct KeyRotation: Sendable {
    /// Sessions (fleet-wide) after which the key is revoked.
    public var revokeAfter: Int
    /// Sessions (fleet-wide) after which the new key is issued and handed out.
    public var replaceAfter: Int
    /// Revokes the key the fleet started with.
    public var revoke: @Sendable () async throws -> Void
    /// Issues the new key.
    public var issue: @Sendable () async throws -> String

    /// A rotation run by the two closures at the given session counts.
    public init(revokeAfter: Int, replaceAfter: Int, revoke: @escaping @Sendable () async throws -> Void, issue: @escaping @Sendable () async throws -> String) {
        self.revokeAfter = revokeAfter
        self.replaceAfter = replaceAfter
        self.revoke = revoke
        self.issue = issue
    }
}

extension KeyRotation {
    /// A rotation through watchdogd's admin API: issues a key for the fleet to start with,
    /// revokes it after a third of `sessions` and issues its successor after two thirds.
    public static func viaAdminAPI(endpoint: URL, app: String, adminToken: String, sessions: Int,
                                   transport: any HTTPTransport = URLSessionTransport()) async throws -> (key: String, rotation: KeyRotation) {
        let keys = endpoint.appendingPathComponent("v1/admin/apps").appendingPathComponent(app).appendingPathComponent("keys")
        @Sendable func issue() async throws -> (key: String, id: String) {
            let response = try await transport.send(TransportRequest(method: "POST", url: keys, headers: [
                "Authorization": "Bearer \(adminToken)", "Content-Type": "application/json",
            ], body: Data("{}".utf8)))
            let json = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
            guard response.status == 201, let key = json?["ingest_key"] as? String, let id = json?["key_id"] as? String else {
                throw RotationError(message: "issuing an ingest key for \(app) got \(response.status)")
            }
            return (key, id)
        }
        let first = try await issue()
        let rotation = KeyRotation(revokeAfter: max(1, sessions / 3), replaceAfter: max(2, sessions * 2 / 3), revoke: {
            let response = try await transport.send(TransportRequest(method: "DELETE", url: keys.appendingPathComponent(first.id),
                                                                     headers: ["Authorization": "Bearer \(adminToken)"]))
            guard response.status == 204 else { throw RotationError(message: "revoking the ingest key got \(response.status)") }
        }, issue: { try await issue().key })
        return (first.key, rotation)
    }
}

/// The admin API refused a key rotation step.
public struct RotationError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
