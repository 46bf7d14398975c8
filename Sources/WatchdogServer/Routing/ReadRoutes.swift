import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// Release health and the effective config: reads, answered on the calling thread.
struct ReadRoutes: Sendable {
    let store: any TelemetryStore
    let lookup: ReleaseLookup
    let config: ConfigService

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
        let query = try ConfigQuery(arguments: ConfigQuery.argumentNames.map { request.query[$0.description] }, principal: principal)
        let (app, client) = (query.app, query.client)
        let explain = request.query["explain"] == "true"
        guard let (effective, explanation) = try storeCall({ try config.effective(app: app, client: client, explain: explain) }) else {
            throw .notFound("no app \(app)")
        }
        if let explanation {
            guard case .object(var fields) = JSONValue.parse(effective.body) ?? .null else { throw .internalError }
            fields["explain"] = explanation
            return JSONBody.response(JSONValue.object(fields), extraHeaders: [("X-Config-Version", String(effective.version))])
        }
        return effective.response(ifNoneMatch: request.headers["if-none-match"])
    }
}
