import Dispatch
import Logging
import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// Answers a request from the route table: finds its route, checks the caller's access (the
/// one place roles are checked), runs the handler, renders every thrown `APIError`, records
/// the request's metrics. Knows nothing of sockets: `WatchdogServer` adapts it to
/// libmicrohttpd, `WatchdogTesting` calls it in memory.
struct Router: Sendable {
    let routes: RouteMatcher
    let authenticator: Authenticator
    let metrics: ServerMetrics
    let trustedProxies: Set<String>
    let logger: Logger
    /// Every change a route makes is one row of it (`audited(_:_:context:)`).
    let audit: AuditLog
    /// On a database across the network, the threads every request but the probes runs on
    /// (`RequestOffload`); `nil`: on the calling thread.
    let offload: RequestOffload?
    /// Proposes, instead of applying, a change its app requires a second person's approval for.
    let fourEyes: FourEyes

    /// The paths answered on the calling thread whatever `offload` is: they call no store.
    static let answeredInPlace: Set<String> = ["/healthz", "/readyz"]

    func respond(to request: HTTPRequest) -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        guard let offload, !Self.answeredInPlace.contains(request.path) else { return respond(to: request, started: started) }
        let pending = PendingResponse()
        offload.run { respond(to: request, started: started).whenReady { pending.respond($0) } }
        return .later(pending)
    }

    private func respond(to request: HTTPRequest, started: UInt64) -> Response {
        var template = "unmatched"
        let method: String
        switch request.method {
        case "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD": method = request.method
        default: method = "other"
        }
        let response: Response
        do {
            response = try route(request, template: &template)
        } catch {
            if error.code == APIError.storeUnreachableCode {
                metrics.outage.refusals.increment()  // its cause is logged once, not per request
            } else if error.status >= 500 { logger.warning("\(request.method) \(request.path) → \(error.status) \(error.code): \(error.message)") }
            response = .now(error.response)
        }
        let metrics = self.metrics
        let route = template
        response.whenReady { answer in
            metrics.request(route: route, method: method, status: answer.status, seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
        }
        return response
    }

    /// Answers with the request's route; sets `template` (for the metrics) once the path matched.
    private func route(_ request: HTTPRequest, template: inout String) throws(APIError) -> Response {
        guard let (matched, parameters) = routes.match(path: request.path) else { throw RouteMatcher.unknownPath(request.path) }
        template = matched.path
        let route = try RouteMatcher.route(for: request.method, in: matched)
        let caller = try authorize(request, for: route, parameters: parameters)
        let context = RequestContext(parameters: parameters, caller: caller)
        guard let caller, Self.changes(route, request) else { return try route.handler(request, context) }
        // Four eyes: on an app that requires it, the change is proposed instead (202).
        let address = IngestRoutes.client(of: request, trusting: trustedProxies)
        if let proposed = try fourEyes.proposal(for: route, request, caller: caller, context: context, address: address) { return proposed }
        return try audited(route, request, caller: caller, context: context)
    }

    /// Whether a call of the route is a change to audit: every method but `GET` on a route that
    /// takes a viewer, operator or admin credential (ingest is data, not a change; sign-in, an
    /// open route, is audited by `AuthRoutes`), except a dry run.
    static func changes(_ route: Route, _ request: HTTPRequest) -> Bool {
        guard route.method != "GET", route.access != .open, route.access != .ingest else { return false }
        return request.query["dry_run"] != "true"
    }

    /// Runs the handler with its audit row pending: action `AuditActions.name` (`config.update`), the caller's name
    /// and address, the path's app (or the body's, creating an app), the request's body as
    /// `after` (redacted) unless the handler says better. Written with the change.
    private func audited(_ route: Route, _ request: HTTPRequest, caller: Principal, context: RequestContext) throws(APIError) -> Response {
        let body = request.body.isEmpty ? nil : JSONValue.parse(request.body)
        var app = context.parameters["app"]
        if app == nil, case .object(let fields)? = body, case .string(let named)? = fields["app"] { app = named }
        let entry = audit.entry(AuditActions.name(method: route.method, template: route.path, parameters: context.parameters), app: app, actor: caller.name,
                                address: IngestRoutes.client(of: request, trusting: trustedProxies), after: body)
        return try audit.around(entry) { () throws(APIError) in try route.handler(request, context) }
    }

    /// The caller, when the route needs one, after checking it may call the route and touch
    /// its app (a caller limited to other apps gets the 404 of an app that does not exist).
    private func authorize(_ request: HTTPRequest, for route: Route, parameters: [String: String]) throws(APIError) -> Principal? {
        guard route.access != .open else { return nil }
        let principal = try authenticator.principal(for: request)
        guard route.access.allows(principal.role) else { throw .forbidden(route.access.refusal(principal.role)) }
        try route.access.scope?.check(principal, parameters: parameters, query: request.query)
        // A change made with the session cookie must carry the session's CSRF token: a page
        // of another site can make a browser send the cookie, but cannot read the token.
        if let csrf = principal.csrfToken, route.method != "GET" {
            guard let sent = request.headers["x-csrf-token"], constantTimeEquals(Array(sent.utf8), Array(csrf.utf8)) else {
                throw .forbidden("changes from the dashboard need the X-CSRF-Token header of the session (GET /v1/auth/session)")
            }
        }
        return principal
    }

    /// Runs the handler of a read-only view as a viewer's request would, for the warm-up before
    /// the server listens (`WatchdogApplication.warmUp`): no caller is checked and the answer
    /// is dropped. Only ever given paths the server builds itself.
    func warmUp(_ request: HTTPRequest) {
        guard request.method == "GET", let (route, parameters) = try? routes.route(method: "GET", path: request.path),
              case .viewer = route.access else { return }
        _ = try? route.handler(request, RequestContext(parameters: parameters, caller: nil))
    }

    /// Decides on a request that announces a body from its headers alone, before any of the
    /// body is buffered: an unknown path or a wrong method is answered at once, and so is a
    /// request without valid credentials on a route that needs them. Accepted bodies are
    /// counted for the client (behind a trusted proxy, the one it names).
    func admit(_ head: HTTPRequestHead) -> HTTPAdmission {
        let request = head.request
        do throws(APIError) {
            let (route, _) = try routes.route(method: request.method, path: request.path)
            if route.access != .open { _ = try authenticator.principal(for: request) }
        } catch {
            return .refuse(error.response)
        }
        return .accept(budgetKey: IngestRoutes.client(of: request, trusting: trustedProxies))
    }
}
