import Foundation
import Testing
import WatchdogServer
import WatchdogTesting
import WatchdogWire

/// An app with attestation settings over a `TestApplication` that trusts a test CA, and the
/// calls an attested install makes: a challenge, its attestation, signed uploads.
struct AttestedFleet {
    static let app = "com.example.mail"
    static let teamID = "ABCDE12345"
    static let appID = "ABCDE12345.com.example.mail"

    let application: TestApplication
    let fixture: AppAttestFixture
    let key: String
    let admin: String

    init(mode: String = "require", environment: String = "production", configure: (inout ServerSettings) throws -> Void = { _ in }) throws {
        let clock = TestClock()
        fixture = try AppAttestFixture(now: Date(timeIntervalSince1970: clock.seconds))
        application = try TestApplication(clock: clock, attestationRoots: [fixture.rootPEM], configure: configure)
        key = try application.addApp(Self.app)
        admin = try application.addToken(role: "admin", name: "admin")
        try setMode(mode, environment: environment)
    }

    func setMode(_ mode: String, environment: String = "production") throws {
        let response = try application.client.request("PUT", "/v1/admin/apps/\(Self.app)/attestation", token: admin,
                                                      body: Array(#"{"mode":"\#(mode)","team_id":"\#(Self.teamID)","bundle_id":"\#(Self.app)","environment":"\#(environment)"}"#.utf8))
        guard response.status == 200 else { throw FleetError("attestation settings: \(response.status) \(response.text)") }
    }

    func challenge(from address: String = "127.0.0.1") throws -> [UInt8] {
        let response = try application.client(from: address).request("POST", "/v1/attest/challenge", token: key)
        guard response.status == 201, let text = response.json["challenge"] as? String, let bytes = Data(base64Encoded: text) else {
            throw FleetError("challenge: \(response.status) \(response.text)")
        }
        return Array(bytes)
    }

    func postAttestation(install: String, device: AppAttestFixture.DeviceKey, challenge: [UInt8], object: [UInt8]) throws -> TestResponse {
        try application.client.postJSON("/v1/attest", token: key, json: [
            "install_id": install, "key_id": device.keyIDBase64, "challenge": Data(challenge).base64EncodedString(),
            "attestation": Data(object).base64EncodedString(),
        ])
    }

    /// A new device key attested for `install` (fails the test's call when refused).
    func attest(install: String, development: Bool = false) throws -> AppAttestFixture.DeviceKey {
        let device = AppAttestFixture.DeviceKey()
        let challenge = try challenge()
        let response = try postAttestation(install: install, device: device, challenge: challenge,
                                           object: try fixture.attestation(key: device, challenge: challenge, appID: Self.appID, development: development))
        guard response.status == 201 else { throw FleetError("attest: \(response.status) \(response.text)") }
        return device
    }

    /// A batch of session starts of `install`, as bytes (the body an assertion signs).
    static func sessionsBody(install: String, count: Int = 1, version: String = "14.2.0", started: Int64) -> [UInt8] {
        let sessions = (0..<count).map { _ -> [String: Any] in
            var session = Fixtures.session(version: version)
            session["install_id"] = install
            session["started_at"] = Timestamp.format(milliseconds: started)
            return session
        }
        return Array(try! JSONSerialization.data(withJSONObject: ["sessions": sessions]))
    }

    func post(_ path: String = "/v1/sessions", body: [UInt8], assertion: String?, from address: String = "127.0.0.1") throws -> TestResponse {
        try application.client(from: address).request("POST", path, token: key, headers: assertion.map { ["Watchdog-Assertion": $0] } ?? [:], body: body)
    }

    /// Session starts stored for the app, counted or not.
    func storedSessions() throws -> Int {
        let releases = try application.store.releases(app: Self.app) ?? []
        return releases.reduce(0) { $0 + $1.sessions + $1.implausibleSessions }
    }
}

extension AttestedFleet {
    /// `installs` attested installs of `version`, one session each, the first `affected` with a
    /// glitch report; each attests its key and signs its uploads. `from`: the first install's
    /// number (an install id belongs to the first key that attests it: a second call names new ones).
    func attestedRelease(version: String, installs: Int, affected: Int, from first: Int = 0) throws {
        for index in first..<(first + installs) {
            let install = "I-\(version)-\(index)"
            var device = try attest(install: install)
            var session = Fixtures.session(version: version, build: "1")
            session["install_id"] = install
            session["started_at"] = Timestamp.format(milliseconds: application.clock.now - 60_000)
            let sessions = Array(try JSONSerialization.data(withJSONObject: ["sessions": [session]]))
            let started = try post(body: sessions, assertion: device.assertionHeader(body: sessions, appID: AttestedFleet.appID), from: "100.64.\(index / 10).17")
            #expect(started.status == 202 && started.json["accepted"] as? Int == 1, "\(started.text)")
            guard index - first < affected else { continue }
            var report = try Fixtures.freshReport(version: version, build: "1", kind: "view_frame_mismatch", sessionID: session["id"] as? String)
            report["install_id"] = install
            let reports = Array(try JSONSerialization.data(withJSONObject: ["reports": [report]]))
            let posted = try post("/v1/reports", body: reports, assertion: device.assertionHeader(body: reports, appID: AttestedFleet.appID),
                                  from: "100.64.\(index / 10).17")
            #expect(posted.status == 202 && posted.json["accepted"] as? Int == 1, "\(posted.text)")
        }
    }

    /// Unattested session starts of `version` from `installs` fresh install ids, ten per
    /// network, the first `affected` with a glitch report: stored under `observe`.
    func forged(version: String, installs: Int, affected: Int) throws {
        var sessions: [[String: Any]] = [], reports: [[String: Any]] = []
        for index in 0..<installs {
            var session = Fixtures.session(version: version, build: "1")
            session["install_id"] = "forged-\(version)-\(index)"
            session["started_at"] = Timestamp.format(milliseconds: application.clock.now - 120_000)
            sessions.append(session)
            if index < affected {
                var report = try Fixtures.freshReport(version: version, build: "1", kind: "view_frame_mismatch", sessionID: session["id"] as? String)
                report["install_id"] = session["install_id"]
                reports.append(report)
            }
        }
        for start in stride(from: 0, to: installs, by: 10) {
            let address = "198.18.\(start / 10 % 256).\(start / 2560 + 1)"
            let started = try post(body: Array(try JSONSerialization.data(withJSONObject: ["sessions": Array(sessions[start..<min(start + 10, installs)])])),
                                   assertion: nil, from: address)
            #expect(started.status == 202 && started.json["accepted"] as? Int == min(10, installs - start), "\(started.text)")
            let batch = reports[min(start, reports.count)..<min(start + 10, reports.count)]
            guard !batch.isEmpty else { continue }
            let posted = try post("/v1/reports", body: Array(try JSONSerialization.data(withJSONObject: ["reports": Array(batch)])), assertion: nil, from: address)
            #expect(posted.status == 202, "\(posted.text)")
        }
    }
}

/// A call of the fleet that the server refused.
struct FleetError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
