import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// Release health and the effective config: reads, answered on the calling thread.
struct ReadRoutes: Sendable {
    let store: any TelemetryStore
    let lookup: ReleaseLookup
    let config: ConfigService
    /// `Cache-Control` of `GET /v1/config`, e.g. `private, max-age=60`.
    let cacheControl: String

    func apps() throws(APIError) -> HTTPResponse {
        let apps = try storeCall { try store.apps() }
        let views = apps.map { app in
            AppsView.App(
                app: app.app, createdAt: Timestamp.format(milliseconds: app.createdAt),
                releases: ReleaseOrder.sorted(app.releases, newestFirst: true) { $0 }.map { "\($0.version) (\($0.build))" }
            )
        }
        return JSONBody.response(AppsView(apps: views))
    }

    func releases(app: String) throws(APIError) -> HTTPResponse {
        guard let releases = try storeCall({ try store.releases(app: app) }) else {
            throw .notFound("no app \(app)")
        }
        var filled: [ReleaseStats] = []
        for release in releases { filled.append(try lookup.withConcentration(release, of: app)) }
        let sorted = ReleaseOrder.sorted(filled, newestFirst: true, by: \.release)
        return JSONBody.response(writing: ReleasesView(app: app, releases: sorted.map(ReleaseStatsView.init)))
    }

    /// `GET /v1/config?app=&version=&build=&channel=&idiom=&install_id=[&explain=true]`.
    func effectiveConfig(_ request: HTTPRequest, principal: Principal) throws(APIError) -> HTTPResponse {
        guard let app = request.query["app"], !app.isEmpty else {
            throw .badRequest("missing_parameter", "app is required: /v1/config?app=<bundle id>&version=&build=&channel=&idiom=&install_id=")
        }
        for name in ["app", "version", "build", "channel", "idiom", "install_id"] {
            // Characters, as the OpenAPI maxLength counts them.
            if let value = request.query[name], value.unicodeScalars.count > (name == "app" ? Limits.appLength : Limits.idLength) {
                throw .badRequest("invalid_parameter", "\(name) is longer than allowed")
            }
        }
        if principal.role == .ingest, principal.app != app {
            throw .forbidden("this ingest key reads the config of \(principal.app ?? "its app") only")
        }
        let client = ConfigClient(version: request.query["version"], build: request.query["build"], channel: request.query["channel"],
                                  idiom: request.query["idiom"], installID: request.query["install_id"])
        let explain = request.query["explain"] == "true"
        guard let (effective, explanation) = try storeCall({ try config.effective(app: app, client: client, explain: explain) }) else {
            throw .notFound("no app \(app)")
        }
        let headers: [(name: String, value: String)] = [
            ("ETag", effective.etag), ("Cache-Control", cacheControl), ("X-Config-Version", effective.versionHeader),
        ]
        if let explanation {
            guard case .object(var fields) = JSONValue.parse(effective.body) ?? .null else { throw .internalError }
            fields["explain"] = explanation
            return JSONBody.response(JSONValue.object(fields), extraHeaders: [("X-Config-Version", String(effective.version))])
        }
        if let ifNoneMatch = request.headers["if-none-match"], ConfigService.matches(ifNoneMatch, etag: effective.etag) {
            return HTTPResponse(status: 304, headers: headers)
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json; charset=utf-8")] + headers, body: effective.body)
    }
}
