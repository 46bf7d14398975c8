import Foundation
import Locking
import Testing
import WatchdogKit
import WatchdogServer
import WatchdogTesting
import WatchdogWire

/// WatchdogKit's `AppAttester` with its uploader against the real router and store: the install
/// attests once and signs every batch; a key App Attest invalidates (a restore) is replaced; an
/// unsupported device uploads unattested, which `require` refuses while the outbox keeps it.
/// `DCAppAttestService` is stood in for by `SimulatedAppAttestService`, which makes keys and
/// attestations as the test CA's devices.
@Suite struct KitAttestationTests {
    static let release = Release(version: "14.2.0", build: "31245")

    struct Device {
        let outbox: Outbox
        let uploader: Uploader
        let attester: AppAttester
    }

    static func device(_ fleet: AttestedFleet, service: SimulatedAppAttestService, install: String) throws -> Device {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kit-attest-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let outbox = try Outbox(directory: directory.appendingPathComponent("outbox"), fallbackRelease: release)
        let clock = fleet.application.clock
        let logger = TaggedLogger(tag: "keyboard")
        let attester = AppAttester(service: service, transport: fleet.application.transport, endpoint: TestApplication.endpoint, ingestKey: fleet.key,
                                   installID: install, stateFile: directory.appendingPathComponent("app-attest.json"), clock: { clock.seconds }, logger: logger)
        let uploader = Uploader(outbox: outbox, endpoint: TestApplication.endpoint, ingestKey: fleet.key, transport: fleet.application.transport,
                                clock: { clock.seconds }, random: { 1.0 }, logger: logger, maximumBackoff: 60, attester: attester)
        return Device(outbox: outbox, uploader: uploader, attester: attester)
    }

    static func sessions(_ device: Device, install: String, count: Int, now: Int64) throws {
        for _ in 0..<count {
            try device.outbox.persist(SessionStart(id: UUID().uuidString.lowercased(), installId: install, startedAt: Timestamp.format(milliseconds: now - 60_000),
                                                   app: AttestedFleet.app, release: release))
        }
    }

    @Test func anOptedInInstallAttestsOnceAndItsUploadsAreAcceptedUnderRequire() async throws {
        let fleet = try AttestedFleet()
        let service = SimulatedAppAttestService(fixture: fleet.fixture, appID: AttestedFleet.appID)
        let device = try Self.device(fleet, service: service, install: "I-kit")
        try Self.sessions(device, install: "I-kit", count: 3, now: fleet.application.clock.now)
        #expect(await device.uploader.drain() == .drained)
        try Self.sessions(device, install: "I-kit", count: 2, now: fleet.application.clock.now)
        #expect(await device.uploader.drain() == .drained)
        #expect(device.attester.isAttested)
        #expect(service.generated == 1)
        #expect(try fleet.storedSessions() == 5)
        #expect(try fleet.application.store.attestedInstalls(app: AttestedFleet.app) == ["I-kit"])
    }

    @Test func aKeyInvalidatedByARestoreIsReplacedAndAttestedAgain() async throws {
        let fleet = try AttestedFleet()
        let service = SimulatedAppAttestService(fixture: fleet.fixture, appID: AttestedFleet.appID)
        let device = try Self.device(fleet, service: service, install: "I-kit")
        try Self.sessions(device, install: "I-kit", count: 1, now: fleet.application.clock.now)
        #expect(await device.uploader.drain() == .drained)
        service.invalidateAll()
        try Self.sessions(device, install: "I-kit", count: 1, now: fleet.application.clock.now)
        // The assertion fails: the batch goes unsigned, `require` refuses it, the outbox keeps it.
        guard case .waitingUntil = await device.uploader.drain() else { Issue.record("expected a backoff"); return }
        #expect(device.outbox.count(.sessions) == 1)
        // The next attempt makes and attests a new key, and the batch goes.
        fleet.application.clock.advance(seconds: 120)
        #expect(await device.uploader.drain() == .drained)
        #expect(service.generated == 2)
        #expect(try fleet.storedSessions() == 2)
    }

    @Test func anUnsupportedDeviceUploadsUnattestedWhichRequireRefusesAndObserveStores() async throws {
        let fleet = try AttestedFleet()
        let service = SimulatedAppAttestService(fixture: fleet.fixture, appID: AttestedFleet.appID, supported: false)
        let device = try Self.device(fleet, service: service, install: "I-sim")
        try Self.sessions(device, install: "I-sim", count: 2, now: fleet.application.clock.now)
        guard case .waitingUntil = await device.uploader.drain() else { Issue.record("expected a backoff"); return }
        #expect(device.outbox.count(.sessions) == 2)
        #expect(try fleet.storedSessions() == 0)
        try fleet.setMode("observe")
        fleet.application.clock.advance(seconds: 120)
        #expect(await device.uploader.drain() == .drained)
        #expect(try fleet.storedSessions() == 2)
        #expect(service.generated == 0)
    }
}
