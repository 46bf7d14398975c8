import Dispatch
import WatchdogHTTP

/// `GET /v1/config` answered from the request's headers, before the router: the fleet polls
/// it, and most polls find a config already evaluated for their rule set.
///
/// It answers only what it can answer exactly as the route would — a bearer token verified
/// within the last second, a valid query without `explain`, a config ready in memory with
/// `test_crash` off — with the `200` or `304` built once per config version
/// (`ConfigService.Effective.prepared`). Everything else (unknown or stale tokens, cookies,
/// errors, explanations, crash budgets) goes the ordinary way. Requests are counted in the
/// same metrics.
struct ConfigFastPath: Sendable {
    static let path = "/v1/config"

    let authenticator: Authenticator
    let config: ConfigService
    let ok: ServerMetrics.RequestRecorder
    let notModified: ServerMetrics.RequestRecorder

    init(authenticator: Authenticator, config: ConfigService, metrics: ServerMetrics) {
        self.authenticator = authenticator
        self.config = config
        ok = metrics.recorder(route: Self.path, method: "GET", status: 200)
        notModified = metrics.recorder(route: Self.path, method: "GET", status: 304)
    }

    /// The prepared answer, or `nil` to send the request to the router.
    func answer(_ request: HTTPRequestPeek) -> PreparedResponse? {
        guard request.path == Self.path else { return nil }
        let started = DispatchTime.now().uptimeNanoseconds
        // The route's access is `.anyCredential`: every verified caller may ask.
        guard let principal = request.header("Authorization").flatMap(authenticator.recentlyVerified(authorization:)) else { return nil }
        let values = request.arguments(Self.argumentNames)
        guard values[ConfigQuery.argumentNames.count] == nil,
              let query = try? ConfigQuery(arguments: values, principal: principal),
              let effective = config.ready(app: query.app, client: query.client), let prepared = effective.prepared else { return nil }
        // The usual If-None-Match is the ETag itself, compared without copying it.
        let isNotModified = request.header("If-None-Match", is: effective.etag)
            || request.header("If-None-Match").map { ConfigService.matches($0, etag: effective.etag) } ?? false
        (isNotModified ? notModified : ok).record(nanoseconds: Int64(DispatchTime.now().uptimeNanoseconds - started))
        return isNotModified ? prepared.notModified : prepared.ok
    }

    /// `ConfigQuery`'s arguments, then `explain` (answered by the router).
    private static let argumentNames = ConfigQuery.argumentNames + ["explain"]
}
