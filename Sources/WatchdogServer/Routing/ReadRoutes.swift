import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// Release health and the effective config: reads, answered on the calling thread.
struct ReadRoutes: Sendable {
    let store: any TelemetryStore
    let lookup: ReleaseLookup
    let config: ConfigService
    let unlisted: UnlistedTotals
    let attestation: AttestationService

    /// `GET /v1/apps`: the apps `principal` sees, with their listed releases (a token limited to
    /// some apps learns nothing of the others, not even their names).
    func apps(for principal: Principal) throws(APIError) -> HTTPResponse {
        let apps = try storeCall { try store.apps() }.filter { principal.sees($0.app) }
        let views = apps.map { app in
            AppsView.App(
                app: app.app, createdAt: Timestamp.format(milliseconds: app.createdAt),
                releases: ReleaseOrder.sorted(app.releases, newestFirst: true) { $0 }.map { "\($0.version) (\($0.build))" }
            )
        }
        return JSONBody.response(AppsView(apps: views))
    }

    /// `GET /v1/apps/{app}/releases?offset=&limit=`: listed releases, newest first, one page
    /// (the concentration is read for that page only), and the unlisted releases' totals (from
    /// memory, at most `UnlistedTotals.maximumAgeSeconds` old). While the app's attestation is
    /// on, each release says how many of its sessions are of attested installs.
    func releases(app: String, request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let limit = try ReleaseLookup.limit(request.query["limit"], default: 100, maximum: 1000)
        let offset = try ReleaseLookup.offset(request.query["offset"])
        guard let releases = try storeCall({ try store.releases(app: app) }) else {
            throw .notFound("no app \(app)")
        }
        let unlisted = try unlisted.totals(app: app)
        let sorted = ReleaseOrder.sorted(releases, newestFirst: true, by: \.release)
        let shown = Array(sorted.dropFirst(offset).prefix(limit))
        let attested = attestation.settings(app: app).mode == .off ? nil
            : try storeCall { try store.attestedSessions(app: app, releases: shown.map(\.release)) }
        var page: [ReleaseStatsView] = []
        for release in shown {
            var view = ReleaseStatsView(try lookup.withConcentration(release, of: app))
            if let attested { view.attestedSessions = min(attested[release.release] ?? 0, release.sessions) }
            page.append(view)
        }
        return JSONBody.response(writing: ReleasesView(app: app, releases: page, total: sorted.count, offset: offset, limit: limit,
                                                       unlisted: UnlistedSummaryView(unlisted)))
    }

    /// `GET /v1/config?app=&version=&build=&channel=&idiom=&install_id=[&explain=true]`.
    func effectiveConfig(_ request: HTTPRequest, principal: Principal) throws(APIError) -> HTTPResponse {
        let query = try ConfigQuery(arguments: ConfigQuery.argumentNames.map { request.query[$0.description] }, principal: principal)
        let (app, client) = (query.app, query.client)
        let explain = request.query["explain"] == "true"
        // The ingest key ships in every app: with it, the rules' names and which one switched
        // an install would tell a forger which install ids land in which cohort.
        if explain, principal.role == .ingest {
            throw .forbidden("explain=true needs a viewer, operator or admin token: the ingest key is public, and the rules that decide a value are not")
        }
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
