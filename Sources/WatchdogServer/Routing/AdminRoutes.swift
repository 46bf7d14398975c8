import Foundation
import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// Config changes, apps and ingest keys: admin tokens only.
struct AdminRoutes: Sendable {
    let store: any TelemetryStore
    let config: ConfigService
    let authenticator: Authenticator
    let clock: @Sendable () -> Int64

    func getConfig(app: String, principal: Principal) throws(APIError) -> HTTPResponse {
        try requireAdmin(principal)
        guard let document = try storeCall({ try config.document(app: app) }) else { throw .notFound("no app \(app)") }
        return JSONBody.response(document.adminView, extraHeaders: [("ETag", document.etag)])
    }

    func patchConfig(_ request: HTTPRequest, app: String, principal: Principal) throws(APIError) -> HTTPResponse {
        try requireAdmin(principal)
        guard let patch = JSONValue.parse(request.body) else {
            throw .badRequest("invalid_json", "the body must be a JSON merge patch (RFC 7396), e.g. {\"test_crash\": true}")
        }
        let document = try storeCall { try config.patch(app: app, patch: patch, ifMatch: request.headers["if-match"], actor: principal.name) }
        return JSONBody.response(document.adminView, extraHeaders: [("ETag", document.etag)])
    }

    /// `POST /v1/admin/apps {"app": "com.example.mail"}` → the app and its first ingest key.
    func createApp(_ request: HTTPRequest, principal: Principal) throws(APIError) -> HTTPResponse {
        try requireAdmin(principal)
        guard case .object(let fields)? = JSONValue.parse(request.body), case .string(let app)? = fields["app"] else {
            throw .badRequest("invalid_shape", "the body must be {\"app\": \"<bundle id>\"}")
        }
        try AppName.validate(app)
        let created = try storeCall { try store.createApp(app, createdAtMilliseconds: clock()) }
        guard created else {
            throw APIError(status: 409, code: "app_exists", message: "app \(app) already exists; add a key with POST /v1/admin/apps/\(app)/keys")
        }
        return try issueKey(app: app, name: "\(app) ingest key", status: 201)
    }

    /// `POST /v1/admin/apps/{app}/keys` → a new ingest key.
    func createKey(_ request: HTTPRequest, app: String, principal: Principal) throws(APIError) -> HTTPResponse {
        try requireAdmin(principal)
        var name = "\(app) ingest key"
        if case .object(let fields)? = JSONValue.parse(request.body), case .string(let given)? = fields["name"] {
            guard !given.isEmpty, given.utf8.count <= 128 else { throw .badRequest("invalid_field", "name must be 1–128 bytes") }
            name = given
        }
        guard try storeCall({ try store.appExists(app) }) else { throw .notFound("no app \(app)") }
        return try issueKey(app: app, name: name, status: 201)
    }

    /// `DELETE /v1/admin/apps/{app}/keys/{key_id}`.
    func revokeKey(app: String, keyID: String, principal: Principal) throws(APIError) -> HTTPResponse {
        try requireAdmin(principal)
        guard try storeCall({ try store.revokeIngestKey(app: app, keyID: keyID, atMilliseconds: clock()) }) else {
            throw .notFound("no live ingest key \(keyID) for app \(app)")
        }
        authenticator.forget(credentialID: keyID)
        return HTTPResponse(status: 204, headers: [("Cache-Control", "no-store")])
    }

    private func issueKey(app: String, name: String, status: Int) throws(APIError) -> HTTPResponse {
        let (record, token) = CredentialIssuer.issue(role: .ingest, app: app, name: name, nowMilliseconds: clock())
        try storeCall { try store.addCredential(record) }
        let body: JSONValue = .object([
            "app": .string(app),
            "key_id": .string(record.id),
            "ingest_key": .string(token),
        ])
        return JSONBody.response(status: status, body)
    }

    private func requireAdmin(_ principal: Principal) throws(APIError) {
        guard principal.role == .admin else {
            throw .forbidden("this needs an admin token; a \(principal.role.rawValue) credential cannot change config, apps or keys")
        }
    }
}

/// App ids: bundle-id-like names, also used in URL paths.
public enum AppName {
    public static func validate(_ app: String) throws(APIError) {
        let allowed = app.utf8.allSatisfy { byte in
            (byte >= 97 && byte <= 122) || (byte >= 65 && byte <= 90) || (byte >= 48 && byte <= 57) || byte == 46 || byte == 45 || byte == 95
        }
        guard !app.isEmpty, app.utf8.count <= 255, allowed else {
            throw .badRequest("invalid_field", "app must be 1–255 characters of A-Z a-z 0-9 . - _ (a bundle id such as com.example.mail), got \"\(app.prefix(64))\"")
        }
    }
}
