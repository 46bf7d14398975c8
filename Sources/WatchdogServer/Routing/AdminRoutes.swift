import Foundation
import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// Config changes, apps and ingest keys (admin tokens); the config and its history (viewers too).
struct AdminRoutes: Sendable {
    let store: any TelemetryStore
    let config: ConfigService
    let authenticator: Authenticator
    let clock: @Sendable () -> Int64

    /// Viewers read the config and its history (the dashboard shows it read-only).
    func getConfig(app: String) throws(APIError) -> HTTPResponse {
        guard let document = try storeCall({ try config.document(app: app) }) else { throw .notFound("no app \(app)") }
        return JSONBody.response(document.adminView, extraHeaders: [("ETag", document.etag)])
    }

    /// `PATCH` (merge patch) or `PUT` (whole document), `?dry_run=true` to see the effect only.
    func changeConfig(_ request: HTTPRequest, app: String, principal: Principal, replace: Bool) throws(APIError) -> HTTPResponse {
        guard let body = JSONValue.parse(request.body) else {
            throw .badRequest("invalid_json", replace
                ? "the body must be a config document {\"defaults\": {...}, \"rules\": [...]}"
                : "the body must be a JSON merge patch (RFC 7396), e.g. {\"test_crash\": true}")
        }
        let dryRun = try Self.dryRun(request)
        let change = try storeCall {
            replace
                ? try config.replace(app: app, document: body, ifMatch: request.headers["if-match"], actor: principal.name, dryRun: dryRun)
                : try config.patch(app: app, patch: body, ifMatch: request.headers["if-match"], actor: principal.name, dryRun: dryRun)
        }
        return response(change)
    }

    /// `POST …/config/rollback {"version": N}`: the content of version N again, as a new version.
    func rollback(_ request: HTTPRequest, app: String, principal: Principal) throws(APIError) -> HTTPResponse {
        // `additionalProperties: false` in the contract: a field that looks meaningful
        // (`defaults`, `force`) must not be silently ignored.
        guard case .object(let fields)? = JSONValue.parse(request.body), fields.count == 1, case .number(let number)? = fields["version"],
              number == number.rounded(), number >= 1, number <= 1e9 else {
            throw .badRequest("invalid_shape", "the body must be {\"version\": N}, with no other field, with a version from GET …/config/history")
        }
        let change = try storeCall {
            try config.rollback(app: app, to: Int(number), ifMatch: request.headers["if-match"], actor: principal.name, dryRun: try Self.dryRun(request))
        }
        return response(change)
    }

    private func response(_ change: ConfigService.Change) -> HTTPResponse {
        guard let impact = change.impact else {
            return JSONBody.response(change.document.adminView, extraHeaders: [("ETag", change.document.etag)])
        }
        return JSONBody.response(DryRunView(document: change.document.adminView, impact: impact,
                                            impactWindowDays: Int(ConfigService.impactWindowMilliseconds / 86_400_000)))
    }

    private static func dryRun(_ request: HTTPRequest) throws(APIError) -> Bool {
        switch request.query["dry_run"] {
        case nil, "false"?: return false
        case "true"?: return true
        case let other?: throw .badRequest("invalid_parameter", "dry_run must be true or false, got \(other.prefix(20))")
        }
    }

    /// `POST /v1/admin/apps {"app": "com.example.mail"}` → the app and its first ingest key.
    func createApp(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
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
    func createKey(_ request: HTTPRequest, app: String) throws(APIError) -> HTTPResponse {
        var name = "\(app) ingest key"
        if !request.body.isEmpty {
            guard case .object(let fields)? = JSONValue.parse(request.body) else {
                throw .badRequest("invalid_shape", "the body must be empty or {\"name\": \"…\"}")
            }
            for key in fields.keys where key != "name" { throw .badRequest("invalid_field", "\(key.prefix(40)) is not a field; only name") }
            if let value = fields["name"] {
                guard case .string(let given) = value, !given.isEmpty, given.unicodeScalars.count <= 128 else {
                    throw .badRequest("invalid_field", "name must be a string of 1–128 characters")
                }
                name = given
            }
        }
        guard try storeCall({ try store.appExists(app) }) else { throw .notFound("no app \(app)") }
        return try issueKey(app: app, name: name, status: 201)
    }

    /// `DELETE /v1/admin/apps/{app}/keys/{key_id}`.
    func revokeKey(app: String, keyID: String) throws(APIError) -> HTTPResponse {
        guard try storeCall({ try store.revokeIngestKey(app: app, keyID: keyID, atMilliseconds: clock()) }) else {
            throw .notFound("no live ingest key \(keyID) for app \(app)")
        }
        authenticator.forget(credentialID: keyID)
        authenticator.sessions.forget(credentialID: keyID)
        return HTTPResponse(status: 204, headers: [("Cache-Control", "no-store")])
    }

    private func issueKey(app: String, name: String, status: Int) throws(APIError) -> HTTPResponse {
        let (record, token) = CredentialIssuer.issue(role: .ingest, app: app, name: name, nowMilliseconds: clock())
        try storeCall { try store.addCredential(record) }
        return JSONBody.response(status: status, IngestKeyView(app: app, keyID: record.id, ingestKey: token))
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
