import Testing
import Foundation
@testable import WatchdogServer
import WatchdogStore

@Suite struct CredentialHashTests {
    @Test func credentialHashMatchesTheFIPSVectors() {
        #expect(CredentialHash.sha256(Array("abc".utf8)).hexString == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(CredentialHash.sha256([]).hexString == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(CredentialHash.sha256(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)).hexString
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(CredentialHash.sha256([UInt8](repeating: 0x61, count: 1_000_000)).hexString
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func constantTimeEqualsComparesWholeArrays() {
        #expect(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEquals([1, 2], [1, 2, 3]))
    }
}

/// Fingerprints are stored (issues, marks, reports): the same parts must give the same text in
/// every version. Expected values from an independent FNV-1a-64 (Python) over the parts joined
/// by U+001F.
@Suite struct FingerprintTests {
    @Test func aFingerprintIsFNV1a64OfItsPartsAsStoredDataHasIt() {
        #expect(Fingerprint.of(kind: "view_frame_mismatch", screen: "ComposeViewController", viewName: "toolbar", keyboardMode: "docked") == "fp_320ac34f33fa5434")
        #expect(Fingerprint.of(kind: "interaction_lock", screen: nil, viewName: nil, keyboardMode: nil) == "fp_00ff22c76c83d89a", "leading zeros kept")
        #expect(Fingerprint.of(kind: "x-custom.glitch", screen: "Réglages", viewName: "ツールバー", keyboardMode: nil) == "fp_da932df4e671bd87")
        #expect(Fingerprint.of(kind: "interaction_lock", screen: "", viewName: nil, keyboardMode: nil) == "fp_00ff22c76c83d89a", "no screen is an empty one")
    }
}

@Suite struct ReleaseOrderTests {
    @Test func thePredecessorIsTheNewestOlderReleaseWithSessionsInAnyOrder() {
        let releases = [ReleaseStats.sample(version: "14.3.0", build: "3", sessions: 10), ReleaseStats.sample(version: "14.2.0", build: "2", sessions: 0),
                        ReleaseStats.sample(version: "14.1.0", build: "1", sessions: 10), ReleaseStats.sample(version: "14.0.0", build: "0", sessions: 10)]
        // With no network known and nothing declared, every listed release has comparable reach.
        let reach = ReleaseReach(networks: [:], declared: [], share: 0.25)
        for order in [releases, releases.reversed(), [releases[2], releases[0], releases[3], releases[1]]] {
            #expect(reach.predecessor(of: ReleaseID(version: "14.3.0", build: "3"), in: order)?.release.version == "14.1.0")
            #expect(reach.predecessor(of: ReleaseID(version: "14.0.0", build: "0"), in: order) == nil)
        }
    }

    /// The predecessor found in a list already sorted newest first is the one found by
    /// comparing versions pairwise, for every release of lists with declared releases, known
    /// networks, releases without sessions, other builds and versions of equal precedence.
    @Test func thePredecessorAmongSortedReleasesIsThePairwiseOne() {
        var generator = SplitMix64(seed: 42)
        for round in 0..<200 {
            let versions = ["14.0.0", "14.1.0", "14.2.0", "14.2", "14.2.0-beta.1", "14.10.0", "15.0", "nightly"]
            var seen: Set<ReleaseID> = []
            let releases = (0..<Int(generator.next() % 12 + 1)).map { _ in
                ReleaseStats.sample(version: versions[Int(generator.next() % UInt64(versions.count))], build: "\(generator.next() % 3)", sessions: Int(generator.next() % 3) * 5)
            }.filter { seen.insert($0.release).inserted }
            let networks = Dictionary(releases.map { ($0.release, Int(generator.next() % 6)) }, uniquingKeysWith: max)
            let declared = round % 3 == 0 ? [] : Set(releases.filter { _ in generator.next() % 3 == 0 }.map(\.release))
            let reach = ReleaseReach(networks: round % 4 == 0 ? [:] : networks, declared: declared, share: 0.5)
            let sorted = ReleaseOrder.sorted(releases, newestFirst: true, by: \.release)
            for (position, release) in sorted.enumerated() {
                let found = reach.predecessor(of: release.release, amongOlderNewestFirst: sorted[(position + 1)...])?.release
                let pairwise = reach.predecessor(of: release.release, in: releases.shuffled(using: &generator))?.release
                // Releases of equal precedence (14.2 and 14.2.0 of one build) are either's pick.
                let same = switch (found, pairwise) {
                case (nil, nil): true
                case let (found?, pairwise?): !ReleaseOrder.isOlder(found, pairwise) && !ReleaseOrder.isOlder(pairwise, found)
                default: false
                }
                #expect(same, "round \(round): \(String(describing: found)) against \(String(describing: pairwise))")
            }
        }
    }

    @Test func ordersBySemanticVersionThenBuild() {
        let releases = [("14.10.0", "1"), ("14.9.1", "2"), ("14.2.0", "31245"), ("14.2.0", "9999"), ("14.2.0-beta.2", "1"), ("14.2.0-beta.10", "1"), ("14.2", "5")]
            .map { ReleaseID(version: $0.0, build: $0.1) }
        let sorted = releases.sorted(by: ReleaseOrder.isOlder).map { "\($0.version) (\($0.build))" }
        #expect(sorted == ["14.2.0-beta.2 (1)", "14.2.0-beta.10 (1)", "14.2 (5)", "14.2.0 (9999)", "14.2.0 (31245)", "14.9.1 (2)", "14.10.0 (1)"])
    }

    /// The sort that parses each version once orders exactly as the pairwise comparison.
    @Test func sortsWithVersionsParsedOnceInTheSameOrder() {
        let releases = [("v14.10.0", "1"), ("14.9.1+meta", "2"), ("14.2.0", "31245"), ("14.2.0", "009999"), ("14.2.0-beta.2", "1"), ("14.2.0-beta", "1"),
                        ("14.2.0-beta.10", "1"), ("14.2", "5"), ("14.2.0-alpha.beta", "1"), ("nightly", "7"), ("14..2", "1"), ("", "")]
            .map { ReleaseID(version: $0.0, build: $0.1) }
        let pairwise = releases.sorted(by: ReleaseOrder.isOlder)
        #expect(ReleaseOrder.sorted(releases.reversed()) { $0 } == pairwise)
        #expect(ReleaseOrder.sorted(releases, newestFirst: true) { $0 } == pairwise.reversed())
        #expect(Array(pairwise.map(\.version).prefix(4)) == ["14.2.0-alpha.beta", "14.2.0-beta", "14.2.0-beta.2", "14.2.0-beta.10"])
        #expect(Array(pairwise.map(\.version).suffix(3)) == ["14..2", "", "nightly"])
        #expect(ReleaseOrder.compareVersions("14.2", "14.2.0") == 0 && ReleaseOrder.compareVersions("14.10", "14.9.9") == 1)
    }
}

@Suite struct SQLiteStoreDurabilityTests {
    /// GRDB's WAL set-up runs `PRAGMA synchronous = NORMAL` after the connection is prepared;
    /// the store must still commit with the mode it was asked for.
    @Test(arguments: SQLiteStore.Synchronous.allCases)
    func writerCommitsWithTheRequestedSynchronousMode(_ mode: SQLiteStore.Synchronous) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("watchdog-sync-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStore(directory: directory, synchronous: mode)
        #expect(try store.writerSynchronous() == mode)
        try store.close()
        // Opening an existing database takes the same path through GRDB.
        let reopened = try SQLiteStore(directory: directory, synchronous: mode)
        #expect(try reopened.writerSynchronous() == mode)
        try reopened.close()
    }
}
