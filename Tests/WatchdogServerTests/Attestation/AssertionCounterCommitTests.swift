import Dispatch
import Foundation
import Locking
import Testing
import WatchdogStore
import WatchdogTesting

/// An upload's assertion counter moves on in the ingest group commit (docs/security.md, "Attested
/// installs"): per batch, before its items, in request order. A batch whose counter does not
/// move on stores nothing and is answered `counterNotIncreasing`; the other batches of the
/// commit come out as if it were not there. On SQLite, or PostgreSQL with
/// `WATCHDOG_TEST_STORE=postgres`, through the store the server ingests with.
@Suite struct AssertionCounterCommitTests {
    static func sessions(install: String, count: Int, now: Int64, ids: [String]? = nil) -> [SessionRecord] {
        (ids ?? (0..<count).map { _ in UUID().uuidString.lowercased() }).map { id in
            SessionRecord(id: id, app: AttestedFleet.app, version: "14.2.0", build: "1", channel: nil, installID: install, startedAt: now - 60_000, body: "{}")
        }
    }

    static func signed(_ batch: IngestBatch, by device: AppAttestFixture.DeviceKey, counter: Int64) -> IngestBatch {
        var batch = batch
        batch.assertion = AssertionCounter(app: AttestedFleet.app, keyID: device.keyID, counter: counter)
        return batch
    }

    static func counter(_ fleet: AttestedFleet, _ device: AppAttestFixture.DeviceKey) throws -> Int64? {
        try fleet.application.store.attestedKey(app: AttestedFleet.app, keyID: device.keyID)?.counter
    }

    @Test func twoBatchesWithTheSameAssertionInOneCommitStoreOnlyTheFirst() throws {
        let fleet = try AttestedFleet()
        let device = try fleet.attest(install: "I-1")
        let now = fleet.application.clock.now
        let first = Self.signed(.sessions(Self.sessions(install: "I-1", count: 2, now: now), receivedAt: now), by: device, counter: 1)
        let again = Self.signed(.sessions(Self.sessions(install: "I-1", count: 3, now: now), receivedAt: now), by: device, counter: 1)
        let outcomes = try fleet.application.store.ingest([first, again])
        #expect(outcomes == [.stored(IngestCounts(accepted: 2, duplicates: 0)), .counterNotIncreasing])
        #expect(try fleet.storedSessions() == 2, "none of the second batch's 3 starts")
        #expect(try Self.counter(fleet, device) == 1)
        // The same assertion in a later commit is refused too, reports as sessions.
        let report = ReportRecord(id: UUID().uuidString.lowercased(), app: AttestedFleet.app, version: "14.2.0", build: "1", channel: nil, kind: "view_frame_mismatch",
                                  occurredAt: now - 60_000, sessionID: nil, installID: "I-1", isSuspect: false, screen: nil, autoFixed: false, testCrash: false,
                                  fingerprint: "view_frame_mismatch", body: "{}")
        #expect(try fleet.application.store.ingest([Self.signed(.reports([report], receivedAt: now), by: device, counter: 1)]) == [.counterNotIncreasing])
        #expect(try fleet.application.store.releases(app: AttestedFleet.app)?.reduce(0) { $0 + $1.reportsByKind.values.reduce(0, +) } == 0)
    }

    @Test func oneKeysCountersInOneCommitAreTakenInRequestOrder() throws {
        let fleet = try AttestedFleet()
        let device = try fleet.attest(install: "I-1")
        let now = fleet.application.clock.now
        let batches = [3, 5, 4, 6].map { Self.signed(.sessions(Self.sessions(install: "I-1", count: 1, now: now), receivedAt: now), by: device, counter: $0) }
        let outcomes = try fleet.application.store.ingest(batches)
        let one = IngestOutcome.stored(IngestCounts(accepted: 1, duplicates: 0))
        #expect(outcomes == [one, one, .counterNotIncreasing, one], "4 comes after 5")
        #expect(try Self.counter(fleet, device) == 6)
        #expect(try fleet.storedSessions() == 3)
    }

    @Test func aRefusedBatchLeavesTheOtherBatchesOfItsCommitAsTheyWouldBe() throws {
        let fleet = try AttestedFleet()
        let first = try fleet.attest(install: "I-1"), second = try fleet.attest(install: "I-2")
        let now = fleet.application.clock.now
        #expect(try fleet.application.store.ingest([Self.signed(.sessions(Self.sessions(install: "I-1", count: 1, now: now), receivedAt: now), by: first, counter: 5)])
                    == [.stored(IngestCounts(accepted: 1, duplicates: 0))])
        // The refused batch comes first and holds the ids the batches after it store: had any
        // of it been written, they would come out as duplicates.
        let shared = (0..<4).map { _ in UUID().uuidString.lowercased() }
        let replayed = Self.signed(.sessions(Self.sessions(install: "I-1", count: 4, now: now, ids: shared), receivedAt: now), by: first, counter: 5)
        let other = Self.signed(.sessions(Self.sessions(install: "I-2", count: 3, now: now, ids: Array(shared.prefix(3))), receivedAt: now), by: second, counter: 1)
        let unsigned = IngestBatch.sessions(Self.sessions(install: "I-3", count: 1, now: now, ids: [shared[3]]), receivedAt: now)
        let outcomes = try fleet.application.store.ingest([replayed, other, unsigned])
        #expect(outcomes == [.counterNotIncreasing, .stored(IngestCounts(accepted: 3, duplicates: 0)), .stored(IngestCounts(accepted: 1, duplicates: 0))])
        #expect(try fleet.storedSessions() == 5)
        #expect(try Self.counter(fleet, first) == 5)
        #expect(try Self.counter(fleet, second) == 1)
    }

    /// Several connections (on PostgreSQL, as several nodes would) commit the same assertion
    /// at once: one of them stores its batch.
    @Test func theSameAssertionCommittedAtOnceByManyWritersIsStoredOnce() throws {
        let fleet = try AttestedFleet()
        let device = try fleet.attest(install: "I-1")
        let now = fleet.application.clock.now
        let store = fleet.application.store
        // The first rounds open the pool's connections, one at a time; later ones overlap.
        let rounds: Int64 = 20
        for round in 1...rounds {
            let outcomes = Locked<[IngestOutcome]>([])
            let failures = Locked<[String]>([])
            let batches = (0..<6).map { _ in Self.signed(.sessions(Self.sessions(install: "I-1", count: 1, now: now), receivedAt: now), by: device, counter: round) }
            DispatchQueue.concurrentPerform(iterations: batches.count) { index in
                let batch = batches[index]
                do {
                    let outcome = try store.ingest([batch])
                    outcomes.withLock { $0 += outcome }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty)
            #expect(outcomes.withLock { $0.filter { $0 != .counterNotIncreasing } } == [.stored(IngestCounts(accepted: 1, duplicates: 0))], "round \(round)")
        }
        #expect(try fleet.storedSessions() == Int(rounds))
        #expect(try Self.counter(fleet, device) == rounds)
    }
}
