import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// Every endpoint watchdogd serves, in one table.
///
/// Adding an endpoint is one entry here, its handler, and its description in
/// `Resources/openapi.yaml` (`OpenAPISyncTests` fails until the two agree). The entry names the
/// access the route needs and the app it touches (`Access`, `AppScope`); `Router` checks both
/// before the handler runs, and `RouteScopeTests` walks every entry with a token of another app.
enum Routes {
    static func table(_ services: Services) -> [Route] {
        let store = services.store
        let lookup = services.lookup
        let auth = AuthRoutes(authenticator: services.authenticator, store: store, cookieSecure: services.settings.cookieSecure,
                              audit: services.audit, trustedProxies: services.settings.trustedProxies)
        let auditRoutes = AuditRoutes(store: store, clock: services.clock)
        let unlisted = UnlistedTotals(store: store)
        let reads = ReadRoutes(store: store, lookup: lookup, config: services.config, unlisted: unlisted, attestation: services.attestation)
        let admin = AdminRoutes(store: store, config: services.config, authenticator: services.authenticator, clock: services.clock)
        let history = ConfigHistoryRoutes(store: store)
        let compare = CompareRoutes(lookup: lookup, config: services.config, attestation: services.attestation, rollouts: services.rollouts)
        let gate = GateRoutes(lookup: lookup, attestation: services.attestation)
        let issues = IssueRoutes(lookup: lookup, clock: services.clock)
        let triage = TriageRoutes(lookup: lookup, clock: services.clock)
        let series = SeriesRoutes(lookup: lookup, clock: services.clock)
        let drillDown = ReportRoutes(lookup: lookup)
        let csv = CSVRoutes(reads: reads, compare: compare, issues: issues, reports: drillDown)
        let ingest = services.ingest
        let resources = StaticResources(directory: services.settings.resourcesDirectory, chartDirectory: services.settings.chartDirectory)
        let metricsAccess = MetricsAccess(token: services.settings.metricsToken, trustedProxies: services.settings.trustedProxies)
        let releaseMetrics = ReleaseMetricsRoutes(store: store, lookup: lookup)
        let health = HealthRoutes(store: store, queue: services.queue)
        let alerts = AlertRoutes(store: store, alerts: services.alerts, clock: services.clock)
        let rollouts = RolloutRoutes(rollouts: services.rollouts)
        let admission = AdmissionRoutes(store: store, lookup: lookup, admission: services.admission, unlisted: unlisted, clock: services.clock)
        let attestation = AttestationRoutes(attestation: services.attestation, ingest: services.ingest)
        let refusals = RefusalRoutes(refusals: services.attestation.refusals, store: store)
        let proposals = ProposalRoutes(fourEyes: services.fourEyes)
        let trustedProxies = services.settings.trustedProxies

        return [
            Route("GET", "/", .open) { _, _ throws(APIError) in .now(try resources.dashboard("index.html")) },
            Route("GET", "/openapi.yaml", .open) { _, _ throws(APIError) in .now(try resources.openAPI()) },
            Route("GET", "/docs/api", .open) { _, _ throws(APIError) in .now(try resources.dashboard("api.html")) },
            Route("GET", "/login", .open) { request, _ throws(APIError) in .now(auth.loginPage(request)) },
            Route("POST", "/login", .open) { request, _ throws(APIError) in .now(auth.loginLink(request)) },
            Route("GET", "/dashboard/{*path}", .open) { _, context throws(APIError) in .now(try resources.dashboard(context["path"])) },
            Route("GET", "/assets/chart.js/{*path}", .open) { _, context throws(APIError) in .now(try resources.chart(context["path"])) },
            Route("GET", "/auth/oidc/start", .open) { request, _ throws(APIError) in
                guard let oidc = services.oidc else { return .now(OIDCPages.page(status: 404, "Sign-in with an identity provider is not set up on this server.")) }
                return .later(oidc.offload { oidc.start(request) })
            },
            Route("GET", "/auth/oidc/callback", .open) { request, _ throws(APIError) in
                guard let oidc = services.oidc else { return .now(OIDCPages.page(status: 404, "Sign-in with an identity provider is not set up on this server.")) }
                return .later(oidc.offload { oidc.callback(request) })
            },
            Route("GET", "/v1/auth/oidc", .open) { _, _ throws(APIError) in .now(services.oidc?.summary() ?? JSONBody.response(OIDCSummary(enabled: false))) },
            Route("POST", "/v1/auth/login", .open) { request, _ throws(APIError) in .now(try auth.login(request)) },
            Route("GET", "/v1/auth/session", .viewer(.caller)) { _, context throws(APIError) in .now(try auth.current(context.principal())) },
            Route("POST", "/v1/auth/logout", .anyCredential(.caller)) { _, context throws(APIError) in .now(try auth.logout(context.principal())) },
            Route("POST", "/v1/auth/links", .viewer(.caller)) { _, context throws(APIError) in .now(try auth.createLink(context.principal())) },
            Route("GET", "/healthz", .open) { _, _ throws(APIError) in .now(JSONBody.response(["status": "ok"])) },
            Route("GET", "/metrics", .open) { request, _ throws(APIError) in
                .now(try metricsAccess.render(request, metrics: services.metrics, queue: services.queue, store: store))
            },
            Route("GET", "/v1/metrics/releases", .viewer(.filtered)) { request, context throws(APIError) in
                .now(try releaseMetrics.render(request, principal: context.principal()))
            },
            Route("GET", "/readyz", .open) { _, _ throws(APIError) in .now(try health.readiness()) },
            Route("POST", "/v1/reports", .ingest) { request, context throws(APIError) in
                let pending = PendingResponse()
                try ingest.post(Report.self, request, principal: context.principal(), responder: pending)
                return .later(pending)
            },
            Route("POST", "/v1/sessions", .ingest) { request, context throws(APIError) in
                let pending = PendingResponse()
                try ingest.post(SessionStart.self, request, principal: context.principal(), responder: pending)
                return .later(pending)
            },
            Route("POST", "/v1/attest/challenge", .ingest) { request, context throws(APIError) in
                .now(try attestation.challenge(request, principal: context.principal()))
            },
            Route("POST", "/v1/attest", .ingest) { request, context throws(APIError) in .now(try attestation.attest(request, principal: context.principal())) },
            Route("GET", "/v1/config", .anyCredential(.query)) { request, context throws(APIError) in
                .now(try reads.effectiveConfig(request, principal: context.principal()))
            },
            Route("GET", "/v1/apps", .viewer(.filtered)) { _, context throws(APIError) in .now(try reads.apps(for: context.principal())) },
            Route("GET", "/v1/apps/{app}/releases", .viewer(.path)) { request, context throws(APIError) in
                .now(try reads.releases(app: context["app"], request: request))
            },
            Route("GET", "/v1/apps/{app}/releases.csv", .viewer(.path)) { request, context throws(APIError) in
                .now(try csv.releases(app: context["app"], request: request))
            },
            Route("GET", "/v1/apps/{app}/compare", .viewer(.path)) { request, context throws(APIError) in
                .now(try compare.compare(app: context["app"], request: request))
            },
            Route("GET", "/v1/apps/{app}/compare.csv", .viewer(.path)) { request, context throws(APIError) in
                .now(try csv.comparison(app: context["app"], request: request))
            },
            Route("GET", "/v1/apps/{app}/gate", .viewer(.path)) { request, context throws(APIError) in
                .now(try gate.gate(app: context["app"], request: request))
            },
            Route("GET", "/v1/apps/{app}/rules", .viewer(.path)) { _, context throws(APIError) in .now(try compare.rules(app: context["app"])) },
            Route("GET", "/v1/apps/{app}/cohorts", .viewer(.path)) { request, context throws(APIError) in
                .now(try compare.cohorts(app: context["app"], request: request))
            },
            Route("GET", "/v1/apps/{app}/overlay", .viewer(.path)) { request, context throws(APIError) in
                .now(try series.overlay(app: context["app"], request: request))
            },
            Route("GET", "/v1/apps/{app}/issues", .viewer(.path)) { request, context throws(APIError) in
                .now(try issues.issues(app: context["app"], request: request))
            },
            Route("GET", "/v1/apps/{app}/issues.csv", .viewer(.path)) { request, context throws(APIError) in
                .now(try csv.issues(app: context["app"], request: request))
            },
            Route("POST", "/v1/apps/{app}/issues/{fingerprint}/resolve", .operator(.path)) { request, context throws(APIError) in
                .now(try triage.act(request, action: "resolve", app: context["app"], fingerprint: context["fingerprint"], principal: context.principal()))
            },
            Route("POST", "/v1/apps/{app}/issues/{fingerprint}/mute", .operator(.path)) { request, context throws(APIError) in
                .now(try triage.act(request, action: "mute", app: context["app"], fingerprint: context["fingerprint"], principal: context.principal()))
            },
            Route("POST", "/v1/apps/{app}/issues/{fingerprint}/reopen", .operator(.path)) { request, context throws(APIError) in
                .now(try triage.act(request, action: "reopen", app: context["app"], fingerprint: context["fingerprint"], principal: context.principal()))
            },
            Route("GET", "/v1/apps/{app}/timeseries", .viewer(.path)) { request, context throws(APIError) in
                .now(try series.timeseries(app: context["app"], request: request))
            },
            Route("GET", "/v1/apps/{app}/keyboard", .viewer(.path)) { request, context throws(APIError) in
                .now(try series.keyboard(app: context["app"], request: request))
            },
            Route("GET", "/v1/apps/{app}/reports", .viewer(.path)) { request, context throws(APIError) in
                .now(try drillDown.list(app: context["app"], request: request))
            },
            Route("GET", "/v1/apps/{app}/reports.ndjson", .viewer(.path)) { request, context throws(APIError) in
                .now(try drillDown.export(app: context["app"], request: request, credential: context.principal().credentialID))
            },
            Route("GET", "/v1/apps/{app}/reports.csv", .viewer(.path)) { request, context throws(APIError) in
                .now(try csv.reports(app: context["app"], request: request, credential: context.principal().credentialID))
            },
            Route("GET", "/v1/reports/{id}", .viewer(.filtered)) { request, context throws(APIError) in
                .now(try drillDown.get(id: context["id"], request: request, principal: context.principal()))
            },
            Route("GET", "/v1/admin/audit", .admin(.filtered)) { request, context throws(APIError) in
                .now(try auditRoutes.page(request, principal: context.principal()))
            },
            Route("GET", "/v1/admin/audit.ndjson", .admin(.filtered)) { request, context throws(APIError) in
                .now(try auditRoutes.export(request, principal: context.principal()))
            },
            Route("POST", "/v1/admin/apps", .admin(.everyApp)) { request, _ throws(APIError) in .now(try admin.createApp(request)) },
            Route("GET", "/v1/admin/apps/{app}/config", .viewer(.path)) { _, context throws(APIError) in .now(try admin.getConfig(app: context["app"])) },
            Route("PUT", "/v1/admin/apps/{app}/config", .operator(.path)) { request, context throws(APIError) in
                .now(try admin.changeConfig(request, app: context["app"], principal: context.principal(), replace: true))
            },
            Route("PATCH", "/v1/admin/apps/{app}/config", .operator(.path)) { request, context throws(APIError) in
                .now(try admin.changeConfig(request, app: context["app"], principal: context.principal(), replace: false))
            },
            Route("GET", "/v1/admin/apps/{app}/config/history", .viewer(.path)) { request, context throws(APIError) in
                .now(try history.page(app: context["app"], query: request.query))
            },
            Route("GET", "/v1/admin/apps/{app}/config/history/{version}", .viewer(.path)) { _, context throws(APIError) in
                .now(try history.entry(app: context["app"], version: context["version"]))
            },
            Route("POST", "/v1/admin/apps/{app}/config/rollback", .operator(.path)) { request, context throws(APIError) in
                .now(try admin.rollback(request, app: context["app"], principal: context.principal()))
            },
            Route("POST", "/v1/admin/apps/{app}/keys", .admin(.path)) { request, context throws(APIError) in .now(try admin.createKey(request, app: context["app"])) },
            Route("DELETE", "/v1/admin/apps/{app}/keys/{key_id}", .admin(.path)) { _, context throws(APIError) in
                .now(try admin.revokeKey(app: context["app"], keyID: context["key_id"]))
            },
            Route("POST", "/v1/admin/apps/{app}/releases", .operator(.path)) { request, context throws(APIError) in
                .now(try admission.declare(request, app: context["app"], principal: context.principal()))
            },
            Route("GET", "/v1/admin/apps/{app}/releases", .operator(.path)) { request, context throws(APIError) in try admission.list(request, app: context["app"]) },
            Route("POST", "/v1/admin/apps/{app}/releases/{release}/admit", .operator(.path)) { _, context throws(APIError) in
                .now(try admission.admit(app: context["app"], release: context["release"], principal: context.principal()))
            },
            Route("DELETE", "/v1/admin/apps/{app}/releases/{release}/listing", .operator(.path)) { _, context throws(APIError) in
                .now(try admission.unlist(app: context["app"], release: context["release"]))
            },
            Route("DELETE", "/v1/admin/apps/{app}/releases/{release}", .operator(.path)) { request, context throws(APIError) in
                .now(try admission.delete(request, app: context["app"], release: context["release"]))
            },
            Route("GET", "/v1/admin/apps/{app}/admission", .viewer(.path)) { _, context throws(APIError) in .now(try admission.settings(app: context["app"])) },
            Route("PUT", "/v1/admin/apps/{app}/admission", .admin(.path)) { request, context throws(APIError) in
                .now(try admission.saveSettings(request, app: context["app"]))
            },
            Route("GET", "/v1/admin/apps/{app}/attestation", .viewer(.path)) { _, context throws(APIError) in .now(try attestation.settings(app: context["app"])) },
            Route("PUT", "/v1/admin/apps/{app}/attestation", .admin(.path)) { request, context throws(APIError) in
                .now(try attestation.saveSettings(request, app: context["app"]))
            },
            Route("GET", "/v1/admin/apps/{app}/attestation/refusals", .viewer(.path)) { _, context throws(APIError) in
                .now(try refusals.lastDay(app: context["app"]))
            },
            Route("GET", "/v1/admin/apps/{app}/approvals", .viewer(.path)) { _, context throws(APIError) in .now(try proposals.settings(app: context["app"])) },
            Route("PUT", "/v1/admin/apps/{app}/approvals", .admin(.path)) { request, context throws(APIError) in
                .now(try proposals.saveSettings(request, app: context["app"]))
            },
            Route("GET", "/v1/admin/apps/{app}/proposals", .viewer(.path)) { request, context throws(APIError) in
                .now(try proposals.list(request, app: context["app"]))
            },
            Route("POST", "/v1/admin/apps/{app}/proposals/{id}/approve", .operator(.path)) { request, context throws(APIError) in
                .now(try proposals.approve(request, app: context["app"], id: context["id"], approver: context.principal(),
                                           address: IngestRoutes.client(of: request, trusting: trustedProxies)))
            },
            Route("POST", "/v1/admin/apps/{app}/proposals/{id}/refuse", .operator(.path)) { request, context throws(APIError) in
                .now(try proposals.refuse(request, app: context["app"], id: context["id"], refuser: context.principal()))
            },
            Route("GET", "/v1/admin/apps/{app}/alerts/rules", .operator(.path)) { _, context throws(APIError) in .now(try alerts.rules(app: context["app"])) },
            Route("POST", "/v1/admin/apps/{app}/alerts/rules", .operator(.path)) { request, context throws(APIError) in
                .now(try alerts.createRule(request, app: context["app"], principal: context.principal()))
            },
            Route("DELETE", "/v1/admin/apps/{app}/alerts/rules/{id}", .operator(.path)) { _, context throws(APIError) in
                .now(try alerts.deleteRule(app: context["app"], id: context["id"]))
            },
            Route("GET", "/v1/admin/apps/{app}/alerts/hooks", .operator(.path)) { _, context throws(APIError) in .now(try alerts.hooks(app: context["app"])) },
            Route("POST", "/v1/admin/apps/{app}/alerts/hooks", .operator(.path)) { request, context throws(APIError) in
                .now(try alerts.createHook(request, app: context["app"], principal: context.principal()))
            },
            Route("DELETE", "/v1/admin/apps/{app}/alerts/hooks/{id}", .operator(.path)) { _, context throws(APIError) in
                .now(try alerts.deleteHook(app: context["app"], id: context["id"]))
            },
            Route("GET", "/v1/admin/apps/{app}/alerts/hooks/{id}/deliveries", .operator(.path)) { _, context throws(APIError) in
                .now(try alerts.deliveries(app: context["app"], id: context["id"]))
            },
            Route("POST", "/v1/admin/apps/{app}/alerts/hooks/{id}/test", .operator(.path)) { _, context throws(APIError) in
                .now(try alerts.sendTest(app: context["app"], id: context["id"], principal: context.principal()))
            },
            Route("POST", "/v1/admin/apps/{app}/alerts/hooks/{id}/digest", .operator(.path)) { _, context throws(APIError) in
                .now(try alerts.sendDigest(app: context["app"], id: context["id"]))
            },
            Route("GET", "/v1/admin/apps/{app}/rollouts", .operator(.path)) { _, context throws(APIError) in .now(try rollouts.list(app: context["app"])) },
            Route("POST", "/v1/admin/apps/{app}/rollouts", .operator(.path)) { request, context throws(APIError) in
                .now(try rollouts.start(request, app: context["app"], principal: context.principal()))
            },
            Route("GET", "/v1/admin/apps/{app}/rollouts/{rule}", .operator(.path)) { _, context throws(APIError) in
                .now(try rollouts.get(app: context["app"], rule: context["rule"]))
            },
            Route("POST", "/v1/admin/apps/{app}/rollouts/{rule}/{action}", .operator(.path)) { request, context throws(APIError) in
                .now(try rollouts.act(request, action: context["action"], app: context["app"], rule: context["rule"], principal: context.principal()))
            },
        ]
    }
}

/// What the routes are built from: the store and the long-lived services around it.
struct Services: Sendable {
    let settings: ServerSettings
    let store: any TelemetryStore
    let queue: IngestQueue
    let config: ConfigService
    let authenticator: Authenticator
    let ingest: IngestRoutes
    let metrics: ServerMetrics
    let alerts: AlertService
    let rollouts: RolloutService
    let lookup: ReleaseLookup
    let admission: AdmissionService
    let attestation: AttestationService
    let clock: @Sendable () -> Int64
    let audit: AuditLog
    /// OpenID Connect sign-in, when `--oidc-issuer` is set.
    let oidc: OIDCSignIn?
    let fourEyes: FourEyes
}
