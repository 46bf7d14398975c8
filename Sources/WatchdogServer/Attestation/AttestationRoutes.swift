import Foundation
import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// `POST /v1/attest/challenge`, `POST /v1/attest` (with the app's ingest key) and the app's
/// attestation settings for admins (docs/security.md, "Attested installs").
struct AttestationRoutes: Sendable {
    let attestation: AttestationService
    /// Its rate limits per key and address apply here too, and its trusted proxies.
    let ingest: IngestRoutes

    /// `POST /v1/attest/challenge`: 201 `{"challenge": base64, "expires_at": ms}`.
    func challenge(_ request: HTTPRequest, principal: Principal) throws(APIError) -> HTTPResponse {
        let app = try Self.app(of: principal)
        let issued = try attestation.refusals.counting(app: app, kind: .attestation) { () throws(APIError) in
            let client = try limit(request, principal)
            return try attestation.challenge(app: app, network: ClientNetwork.of(client) ?? client, address: client)
        }
        return JSONBody.response(status: 201, ChallengeView(challenge: Data(issued.challenge).base64EncodedString(), expiresAt: issued.expiresAt))
    }

    /// `POST /v1/attest {"install_id", "key_id", "challenge", "attestation"}` (the last three
    /// base64): 201 with the key stored for the install.
    func attest(_ request: HTTPRequest, principal: Principal) throws(APIError) -> HTTPResponse {
        let app = try Self.app(of: principal)
        return try attestation.refusals.counting(app: app, kind: .attestation) { () throws(APIError) in try attest(request, principal: principal, app: app) }
    }

    private func attest(_ request: HTTPRequest, principal: Principal, app: String) throws(APIError) -> HTTPResponse {
        _ = try limit(request, principal)
        guard case .object(let fields)? = JSONValue.parse(request.body) else {
            throw .badRequest("invalid_json", "the body must be {\"install_id\", \"key_id\", \"challenge\", \"attestation\"}, the last three base64")
        }
        for key in fields.keys.sorted() where !["install_id", "key_id", "challenge", "attestation"].contains(key) {
            throw .badRequest("invalid_field", "\(key.prefix(40)) is not a field; the fields are install_id, key_id, challenge, attestation")
        }
        guard case .string(let installID)? = fields["install_id"], !installID.isEmpty, installID.utf8.count <= Limits.idLength else {
            throw .badRequest("invalid_field", "install_id must be the install's id, 1 to \(Limits.idLength) bytes")
        }
        let keyID = try Self.base64(fields["key_id"], "key_id", maximum: 64)
        guard keyID.count == 32 else { throw .badRequest("invalid_field", "key_id must be base64 of 32 bytes (App Attest's key identifier)") }
        let challenge = try Self.base64(fields["challenge"], "challenge", maximum: 64)
        let object = try Self.base64(fields["attestation"], "attestation", maximum: Self.maximumAttestation)
        let key = try attestation.attest(app: app, installID: installID, keyID: keyID, object: object, challenge: challenge)
        return JSONBody.response(status: 201, AttestedKeyView(keyID: Data(key.keyID).base64EncodedString(), installID: key.installID, environment: key.environment,
                                                              owner: key.owner))
    }

    /// `GET /v1/admin/apps/{app}/attestation`.
    func settings(app: String) throws(APIError) -> HTTPResponse {
        guard try storeCall({ try attestation.store.appExists(app) }) else { throw .notFound("no app \(app)") }
        let stored = try storeCall { try attestation.store.attestationSettings(app: app) }
        return JSONBody.response(stored.flatMap(AttestationSettings.decoded) ?? AttestationSettings())
    }

    /// `PUT /v1/admin/apps/{app}/attestation`: the whole document (a field left out takes its default).
    func saveSettings(_ request: HTTPRequest, app: String) throws(APIError) -> HTTPResponse {
        guard case .object(let fields)? = JSONValue.parse(request.body) else {
            throw .badRequest("invalid_json", "the body must be the attestation settings, e.g. {\"mode\": \"observe\", \"team_id\": \"ABCDE12345\", \"bundle_id\": \"com.example.mail\"}")
        }
        let known = Set(AttestationSettings.CodingKeys.allCases.map(\.rawValue))
        for key in fields.keys.sorted() where !known.contains(key) {
            throw .badRequest("invalid_field", "\(key.prefix(40)) is not a setting; the settings are \(known.sorted().joined(separator: ", "))")
        }
        for (field, allowed) in [("mode", AttestationSettings.Mode.allCases.map(\.rawValue)), ("environment", AttestationSettings.Environment.allCases.map(\.rawValue))] {
            if let value = fields[field], !allowed.contains(where: { value == .string($0) }) {
                throw .badRequest("invalid_field", "\(field) must be one of \(allowed.joined(separator: ", "))")
            }
        }
        for field in ["team_id", "bundle_id"] where fields[field] != nil {
            guard case .string? = fields[field] else { throw .badRequest("invalid_field", "\(field) must be a string") }
        }
        guard let settings = AttestationSettings.decoded(String(decoding: request.body, as: UTF8.self)) else {
            throw .badRequest("invalid_json", "the settings could not be read")
        }
        try attestation.save(app: app, settings)
        return JSONBody.response(settings)
    }

    /// A real attestation object is about 5 KB (two certificates and a receipt).
    static let maximumAttestation = 32 * 1024

    /// The client's address, once the ingest rate limits let the request through.
    private func limit(_ request: HTTPRequest, _ principal: Principal) throws(APIError) -> String {
        let client = IngestRoutes.client(of: request, trusting: ingest.trustedProxies)
        try ingest.limits.check(key: principal.credentialID, address: client, now: ingest.clock())
        return client
    }

    private static func app(of principal: Principal) throws(APIError) -> String {
        guard let app = principal.app else { throw .forbidden("attestation needs an app's ingest key, not a \(principal.role.rawValue) token") }
        return app
    }

    private static func base64(_ value: JSONValue?, _ field: String, maximum: Int) throws(APIError) -> [UInt8] {
        guard case .string(let text)? = value, text.utf8.count <= (maximum + 2) / 3 * 4, let data = Data(base64Encoded: text), !data.isEmpty else {
            throw .badRequest("invalid_field", "\(field) must be base64 of at most \(maximum) bytes")
        }
        return Array(data)
    }
}

struct ChallengeView: Encodable {
    var challenge: String
    var expiresAt: Int64

    enum CodingKeys: String, CodingKey {
        case challenge
        case expiresAt = "expires_at"
    }
}

struct AttestedKeyView: Encodable {
    var keyID: String
    var installID: String
    var environment: String
    /// The first key that attested the install: its uploads' session starts count as
    /// attested. `false`: another key holds the install; this one's uploads are accepted but
    /// attest nothing (a device restored elsewhere should take a new install id).
    var owner: Bool

    enum CodingKeys: String, CodingKey {
        case keyID = "key_id"
        case installID = "install_id"
        case environment, owner
    }
}
