import Dispatch
import Logging
import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// Dispatches a request to its route, checks credentials, renders every thrown `APIError`.
struct Router: Sendable {
    let authenticator: Authenticator
    let ingest: IngestRoutes
    let reads: ReadRoutes
    let admin: AdminRoutes
    let compare: CompareRoutes
    let issues: IssueRoutes
    let series: SeriesRoutes
    let drillDown: ReportRoutes
    let store: any TelemetryStore
    let queue: IngestQueue
    let resources: StaticResources
    let auth: AuthRoutes
    let metrics: ServerMetrics
    let metricsAccess: MetricsAccess
    let logger: Logger

    func handle(_ request: HTTPRequest, responder: HTTPResponder) {
        let started = DispatchTime.now().uptimeNanoseconds
        let matched = Route.match(path: request.path)
        let template = matched?.template ?? "unmatched"
        let metrics = self.metrics
        let method = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"].contains(request.method) ? request.method : "other"
        responder.observe { status in
            metrics.request(route: template, method: method, status: status, seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
        }
        do {
            if let response = try route(request, matched: matched, responder: responder) { responder.respond(response) }
        } catch {
            if error.status >= 500 { logger.warning("\(request.method) \(request.path) → \(error.status) \(error.code): \(error.message)") }
            responder.respond(error.response)
        }
    }

    /// The response, or `nil` when the route answers through `responder` later.
    private func route(_ request: HTTPRequest, matched: (methods: [String], route: Route, template: String)?, responder: HTTPResponder) throws(APIError) -> HTTPResponse? {
        guard let (methods, route, _) = matched else {
            throw .notFound("no endpoint \(request.path.prefix(200)); see /openapi.yaml for the API")
        }
        let method = request.method == "HEAD" && methods.contains("GET") ? "GET" : request.method
        guard methods.contains(method) else { throw .methodNotAllowed(request.method, allowed: methods) }

        switch route {
        case .index: return try resources.dashboard("index.html")
        case .openAPI: return try resources.openAPI()
        case .dashboardFile(let path): return try resources.dashboard(path)
        case .chartFile(let path): return try resources.chart(path)
        case .loginLink: return method == "GET" ? auth.loginPage(request) : auth.loginLink(request)
        case .authLogin: return try auth.login(request)
        case .healthz: return JSONBody.response(["status": "ok"])
        case .metrics: return try metricsAccess.render(request, metrics: metrics, queue: queue, store: store)
        case .readyz: return try readiness()
        default: break
        }
        let principal = try authenticator.principal(for: request)
        // A change made with the session cookie must carry the session's CSRF token: a page
        // of another site can make a browser send the cookie, but cannot read the token.
        if let csrf = principal.csrfToken, method != "GET" {
            guard let sent = request.headers["x-csrf-token"], constantTimeEquals(Array(sent.utf8), Array(csrf.utf8)) else {
                throw .forbidden("changes from the dashboard need the X-CSRF-Token header of the session (GET /v1/auth/session)")
            }
        }
        switch route {
        case .authSession: return try auth.current(principal)
        case .authLogout: return try auth.logout(principal)
        case .authLinks: return try auth.createLink(principal)
        case .postReports:
            try ingest.post(Report.self, request, principal: principal, responder: responder)
            return nil
        case .postSessions:
            try ingest.post(SessionStart.self, request, principal: principal, responder: responder)
            return nil
        case .config: return try reads.effectiveConfig(request, principal: principal)
        case .apps: return try reads.apps(principal: principal)
        case .releases(let app): return try reads.releases(app: app, principal: principal)
        case .compare(let app): return try viewer(principal) { () throws(APIError) in try compare.compare(app: app, request: request) }
        case .rules(let app): return try viewer(principal) { () throws(APIError) in try compare.rules(app: app) }
        case .cohorts(let app): return try viewer(principal) { () throws(APIError) in try compare.cohorts(app: app, request: request) }
        case .overlay(let app): return try viewer(principal) { () throws(APIError) in try series.overlay(app: app, request: request) }
        case .issues(let app): return try viewer(principal) { () throws(APIError) in try issues.issues(app: app, request: request) }
        case .timeseries(let app): return try viewer(principal) { () throws(APIError) in try series.timeseries(app: app, request: request) }
        case .keyboard(let app): return try viewer(principal) { () throws(APIError) in try series.keyboard(app: app, request: request) }
        case .reports(let app): return try viewer(principal) { () throws(APIError) in try drillDown.list(app: app, request: request) }
        case .export(let app): return try viewer(principal) { () throws(APIError) in try drillDown.export(app: app, request: request, credential: principal.credentialID) }
        case .report(let id): return try viewer(principal) { () throws(APIError) in try drillDown.get(id: id, request: request) }
        case .adminConfig(let app):
            return method == "GET"
                ? try admin.getConfig(app: app, principal: principal)
                : try admin.changeConfig(request, app: app, principal: principal, replace: method == "PUT")
        case .adminConfigHistory(let app): return try admin.history(app: app, principal: principal)
        case .adminConfigVersion(let app, let version): return try admin.historyEntry(app: app, version: version, principal: principal)
        case .adminConfigRollback(let app): return try admin.rollback(request, app: app, principal: principal)
        case .adminApps: return try admin.createApp(request, principal: principal)
        case .adminKeys(let app): return try admin.createKey(request, app: app, principal: principal)
        case .adminKey(let app, let keyID): return try admin.revokeKey(app: app, keyID: keyID, principal: principal)
        case .index, .openAPI, .metrics, .healthz, .readyz, .dashboardFile, .chartFile, .loginLink, .authLogin:
            // Answered before authentication above; reaching here is a routing bug.
            throw .internalError
        }
    }

    /// Decides on a request that announces a body from its headers alone, before any of the
    /// body is buffered: an unknown path or a wrong method is answered at once, and so is a
    /// request without valid credentials on a route that needs them. Accepted bodies are
    /// counted for the client (behind a trusted proxy, the one it names).
    func admit(_ head: HTTPRequestHead) -> HTTPAdmission {
        let request = head.request
        guard let (methods, route, _) = Route.match(path: request.path) else {
            return .refuse(APIError.notFound("no endpoint \(request.path.prefix(200)); see /openapi.yaml for the API").response)
        }
        let method = request.method == "HEAD" && methods.contains("GET") ? "GET" : request.method
        guard methods.contains(method) else { return .refuse(APIError.methodNotAllowed(request.method, allowed: methods).response) }
        switch route {
        case .index, .openAPI, .dashboardFile, .chartFile, .loginLink, .authLogin, .healthz, .metrics, .readyz:
            break
        default:
            do throws(APIError) {
                _ = try authenticator.principal(for: request)
            } catch {
                return .refuse(error.response)
            }
        }
        return .accept(budgetKey: IngestRoutes.client(of: request, trusting: ingest.trustedProxies))
    }

    /// Stats are for viewer and admin tokens, not ingest keys.
    private func viewer(_ principal: Principal, _ body: () throws(APIError) -> HTTPResponse) throws(APIError) -> HTTPResponse {
        guard principal.role == .viewer || principal.role == .admin else {
            throw .forbidden("stats need a viewer or admin token, not an ingest key")
        }
        return try body()
    }

    /// Ready: the store's files are writable, the last commit succeeded, the ingest queue has room.
    private func readiness() throws(APIError) -> HTTPResponse {
        do { try store.checkWritable() } catch { throw .unavailable("the store is not writable: \(error)") }
        if let failure = queue.lastFailure { throw .unavailable("the last commit failed: \(failure)") }
        let depth = queue.depth
        guard depth < queue.capacity * 9 / 10 else { throw .overloaded("the ingest queue is nearly full (\(depth) items)") }
        return JSONBody.response(Readiness(status: "ready", ingestQueueDepth: depth))
    }
}

/// `GET /readyz`.
struct Readiness: Encodable {
    var status: String
    var ingestQueueDepth: Int

    enum CodingKeys: String, CodingKey {
        case status
        case ingestQueueDepth = "ingest_queue_depth"
    }
}
