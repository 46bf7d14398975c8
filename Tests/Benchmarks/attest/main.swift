// What checking an App Attest assertion costs ingest (docs/security.md, "Attested installs"): the whole
// server path of POST /v1/reports with 100 reports a request — in memory through the router
// (`WatchdogTesting`), on a real SQLite store in a temp dir — for an app with attestation off
// and one with it required (one assertion per request: the signature over the body's hash, and
// the counter's compare-and-set in the ingest transaction), alternating rounds of each.
//
//   swift build -c release --product attest-benchmark && "$(swift build -c release --show-bin-path)/attest-benchmark" [requests per round]
//   SYNCHRONOUS=normal …   (the store's --synchronous; default full, as watchdogd's)
//
// Bodies and assertions are made before a round is timed: the figures are the server's only
// (wall time per request, to its 202 after the commit, and the process's CPU per request).
// A program that prints figures, not a timed test.
import Foundation
import WatchdogTesting
import WatchdogStore
import WatchdogWire

func benchmark() throws {
    let perRound = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 200
    let rounds = 5
    let clock = TestClock()
    let fixture = try AppAttestFixture(now: Date(timeIntervalSince1970: clock.seconds))
    let synchronous = ProcessInfo.processInfo.environment["SYNCHRONOUS"] == "normal" ? SQLiteStore.Synchronous.normal : .full
    let application = try TestApplication(clock: clock, attestationRoots: [fixture.rootPEM]) { $0.synchronous = synchronous }
    let admin = try application.addToken(role: "admin")
    let plainKey = try application.addApp("com.example.plain")
    let attestedKey = try application.addApp("com.example.mail")
    let settings = #"{"mode":"require","team_id":"ABCDE12345","bundle_id":"com.example.mail"}"#
    let saved = try application.client.request("PUT", "/v1/admin/apps/com.example.mail/attestation", token: admin, body: Array(settings.utf8))
    precondition(saved.status == 200)
    let appID = "ABCDE12345.com.example.mail"

    // One attested install.
    let challengeText = try application.client.request("POST", "/v1/attest/challenge", token: attestedKey).json["challenge"] as! String
    let challenge = Array(Data(base64Encoded: challengeText)!)
    var device = AppAttestFixture.DeviceKey()
    let object = try fixture.attestation(key: device, challenge: challenge, appID: appID)
    let attested = try application.client.postJSON("/v1/attest", token: attestedKey, json: [
        "install_id": "I-bench", "key_id": device.keyIDBase64, "challenge": challengeText, "attestation": Data(object).base64EncodedString(),
    ])
    precondition(attested.status == 201, attested.text)

    func bodies(app: String) throws -> [[UInt8]] {
        try (0..<perRound).map { _ in
            let reports = try (0..<100).map { _ -> [String: Any] in
                var report = try Fixtures.freshReport(app: app)
                report["id"] = UUID().uuidString.lowercased()
                report["install_id"] = "I-bench"
                return report
            }
            return Array(try JSONSerialization.data(withJSONObject: ["reports": reports]))
        }
    }

    func cpuSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Posts the requests; answers (wall µs per request, CPU µs per request).
    func round(key: String, requests: [([UInt8], [String: String])]) throws -> (Double, Double) {
        let wall = DispatchTime.now().uptimeNanoseconds, cpu = cpuSeconds()
        for (body, headers) in requests {
            let response = try application.client.request("POST", "/v1/reports", token: key, headers: headers, body: body)
            precondition(response.status == 202 && response.json["accepted"] as? Int == 100, response.text)
        }
        let n = Double(requests.count)
        return (Double(DispatchTime.now().uptimeNanoseconds - wall) / 1000 / n, (cpuSeconds() - cpu) * 1e6 / n)
    }

    var off: [(Double, Double)] = [], required: [(Double, Double)] = []
    for _ in 0..<rounds {
        let plain = try bodies(app: "com.example.plain").map { ($0, [String: String]()) }
        off.append(try round(key: plainKey, requests: plain))
        let signed = try bodies(app: "com.example.mail").map { body in (body, ["Watchdog-Assertion": device.assertionHeader(body: body, appID: appID)]) }
        required.append(try round(key: attestedKey, requests: signed))
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    let offWall = median(off.map(\.0)), reqWall = median(required.map(\.0)), offCPU = median(off.map(\.1)), reqCPU = median(required.map(\.1))
    print("POST /v1/reports, 100 reports a request, one at a time, \(perRound) requests a round, \(rounds) rounds alternating, synchronous=\(synchronous.rawValue) (medians):")
    print(String(format: "  attestation off:     %.0f µs wall, %.0f µs CPU per request", offWall, offCPU))
    print(String(format: "  attestation require: %.0f µs wall, %.0f µs CPU per request", reqWall, reqCPU))
    print(String(format: "  require/off: wall %.3f×, CPU %.3f× (%.0f µs more CPU per request)", reqWall / offWall, reqCPU / offCPU, reqCPU - offCPU))
    try application.stop()
}

try benchmark()
