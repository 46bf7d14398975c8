import Dispatch
import Foundation
import Locking
import Testing
import WatchdogTesting

/// A signed upload against the real daemon (docs/security.md, "Attested installs"): its assertion's
/// counter moves on in the ingest group commit, so the same upload is stored once however it is
/// repeated. On SQLite, or PostgreSQL with `WATCHDOG_TEST_STORE=postgres`.
@Suite struct AttestedReplayDaemonTests {
    /// Sent again, it is refused; copies of one sent at once are stored once, in one group
    /// commit or several.
    @Test func aSignedUploadIsStoredOnceWhetherSentAgainOrManyTimesAtOnce() throws {
        let fleet = try AttestedFleetDaemonTests.start(mode: "require")
        let address = "100.64.0.17"
        var device = try AttestedFleetDaemonTests.attest(fleet, install: "I-replay", from: address)
        func signedUpload() throws -> (body: [UInt8], headers: [String: String]) {
            var session = Fixtures.session(version: "14.2.0", build: "1")
            session["install_id"] = "I-replay"
            session["started_at"] = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-60))
            let body = Array(try JSONSerialization.data(withJSONObject: ["sessions": [session]]))
            return (body, ["Content-Type": "application/json", "X-Forwarded-For": address, "Watchdog-Assertion": device.assertionHeader(body: body, appID: AttestedFleetDaemonTests.appID)])
        }
        let upload = try signedUpload()
        let first = try fleet.daemon.client.request("POST", "/v1/sessions", token: fleet.key, headers: upload.headers, body: upload.body)
        #expect(first.status == 202 && first.json["accepted"] as? Int == 1, "\(first.text)")
        let again = try fleet.daemon.client.request("POST", "/v1/sessions", token: fleet.key, headers: upload.headers, body: upload.body)
        #expect(again.status == 401 && again.errorCode == "assertion_counter_replayed", "\(again.text)")

        let copied = try signedUpload()
        let statuses = Locked<[Int]>([])
        let client = fleet.daemon.client, key = fleet.key
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let status = (try? client.request("POST", "/v1/sessions", token: key, headers: copied.headers, body: copied.body).status) ?? 0
            statuses.withLock { $0.append(status) }
        }
        #expect(statuses.withLock { $0.sorted() } == [202] + Array(repeating: 401, count: 7))
        // One install on one network: its release is not listed (admission), its starts are in `unlisted`.
        let releases = try fleet.daemon.client.request("GET", "/v1/apps/\(AttestedFleetDaemonTests.app)/releases", token: fleet.viewer).json
        let counted = ((releases["releases"] as? [[String: Any]] ?? []) + [releases["unlisted"] as? [String: Any] ?? [:]]).reduce(0) {
            $0 + ($1["sessions"] as? Int ?? 0) + ($1["implausible_sessions"] as? Int ?? 0)
        }
        #expect(counted == 2, "\(releases)")
    }
}
