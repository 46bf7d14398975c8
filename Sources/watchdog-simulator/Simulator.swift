import ArgumentParser
import Foundation
import WatchdogSimulation
import WatchdogTesting

@main
struct Simulator: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watchdog-simulator",
        abstract: "A fleet of simulated devices running WatchdogKit against a watchdogd.",
        subcommands: [Run.self, TestCA.self],
        defaultSubcommand: Run.self
    )
}

/// The fleet (the default subcommand).
struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a fleet of simulated devices against a watchdogd.",
        discussion: """
            Two releases of an app (14.1.0 glitches four times as often as 14.2.0), keyboard
            notifications, app switches, iPad Split View with the other app's keyboard,
            composers above a tab bar, iPads running two windows of the app side by side, and
            navigation locks, through WatchdogKit's real watchdog, outbox, uploader and config
            client. With --rotate-key-admin-token the fleet runs on a key it issues, which is
            revoked a third of the way through (uploads get 401, outboxes keep everything) and
            replaced at two thirds. With --attest-ca every device opts in to App Attest, with the
            test CA `watchdog-simulator test-ca` made standing in for Apple's (a debug watchdogd
            trusts it through WATCHDOG_TESTING_ATTESTATION_ROOT_PEM_FILE=DIR/root.pem). Prints what
            the devices produced as JSON (with
            the reports a correct watchdog makes, to compare); exits 1 when anything was left
            undelivered.
            """
    )

    @Option(help: "watchdogd's base URL (env WATCHDOG_URL).")
    var url: String?

    @Option(help: "The app's ingest key (env WATCHDOG_INGEST_KEY); not needed with --rotate-key-admin-token.")
    var ingestKey: String?

    @Option(help: "An admin token: rotate the app's ingest key during the run. Only when given: a WATCHDOG_ADMIN_TOKEN in the environment (the demo's exports) does not turn rotation on.")
    var rotateKeyAdminToken: String?

    @Option(help: "The app's bundle id.")
    var app = "com.example.mail"

    @Option(help: "Simulated devices running at once.")
    var devices = 20

    @Option(help: "Sessions in all.")
    var sessions = 1000

    @Option(help: "Seed for a reproducible fleet.")
    var seed: UInt64 = 1

    @Option(help: "A test CA's directory (watchdog-simulator test-ca): every device attests a key with it and signs its uploads.")
    var attestCa: String?

    @Option(help: "With --attest-ca: the Apple Developer team id the app's attestation settings name.")
    var teamId = "ABCDE12345"

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let base = url ?? environment["WATCHDOG_URL"], let endpoint = URL(string: base) else {
            throw ValidationError("give --url or WATCHDOG_URL")
        }
        var plan = FleetPlan.twoReleases(app: app, devices: devices, sessions: sessions)
        plan.seed = seed
        if let attestCa {
            let directory = URL(fileURLWithPath: attestCa)
            let fixture = try AppAttestFixture(rootPEM: try String(contentsOf: directory.appendingPathComponent("root.pem"), encoding: .utf8),
                                               rootKeyPEM: try String(contentsOf: directory.appendingPathComponent("root-key.pem"), encoding: .utf8), now: Date())
            plan.appAttest = SimulatedAppAttestService(fixture: fixture, appID: "\(teamId).\(app)")
        }
        let key: String
        var rotation: KeyRotation?
        if let admin = rotateKeyAdminToken {
            (key, rotation) = try await KeyRotation.viaAdminAPI(endpoint: endpoint, app: app, adminToken: admin, sessions: sessions)
        } else if let given = ingestKey ?? environment["WATCHDOG_INGEST_KEY"] {
            key = given
        } else {
            throw ValidationError("give --ingest-key (or WATCHDOG_INGEST_KEY), or --rotate-key-admin-token")
        }
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("watchdog-simulator-\(UUID().uuidString)")
        let started = Date()
        let result = try await Fleet.run(plan, endpoint: endpoint, ingestKey: key, workDirectory: work, deadline: Date().addingTimeInterval(600),
                                         keyRotation: rotation)
        let summary: [String: Any] = [
            "sessions": result.sessions, "reports": result.reports, "expected_reports": result.expectedReports, "undelivered": result.undelivered,
            "test_crashes": result.testCrashes, "devices_refused": result.devicesRefused,
            "expected_hardware_keyboard_reports": result.expectedHardwareKeyboardReports,
            "expected_automatic_lock_reports": result.expectedAutomaticLockReports,
            "expected_view_reports": result.expectedViewReports,
            "tab_bar_devices": result.devicesWithTabBar, "two_window_devices": result.devicesWithTwoWindows,
            // Per release: reports beyond what a correct watchdog makes, and glitches it made none for.
            "false_reports": result.reports.reduce(0) { $0 + max(0, $1.value - (result.expectedReports[$1.key] ?? 0)) },
            "missed_reports": result.expectedReports.reduce(0) { $0 + max(0, $1.value - (result.reports[$1.key] ?? 0)) },
            "seconds": (Date().timeIntervalSince(started) * 10).rounded() / 10,
        ]
        let json = try JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys, .prettyPrinted])
        print(String(decoding: json, as: UTF8.self))
        if result.undelivered > 0 { throw ExitCode(1) }
    }
}

/// `watchdog-simulator test-ca DIR`: a CA standing in for Apple's App Attestation root, for
/// attested fleets against a debug watchdogd.
struct TestCA: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test-ca",
        abstract: "Make a test CA for App Attest: DIR/root.pem (for WATCHDOG_TESTING_ATTESTATION_ROOT_PEM_FILE) and DIR/root-key.pem (for --attest-ca).")

    @Argument(help: "The directory to write root.pem and root-key.pem into (made if missing).")
    var directory: String

    func run() throws {
        let fixture = try AppAttestFixture(now: Date())
        let url = URL(fileURLWithPath: directory)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try fixture.rootPEM.write(to: url.appendingPathComponent("root.pem"), atomically: true, encoding: .utf8)
        let keyFile = url.appendingPathComponent("root-key.pem")
        try fixture.rootKeyPEM.write(to: keyFile, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile.path)
        print(url.appendingPathComponent("root.pem").path)
    }
}
