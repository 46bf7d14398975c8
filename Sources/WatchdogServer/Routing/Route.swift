/// Every endpoint watchdogd serves, matched from method and path.
enum Route: Equatable {
    case index
    case openAPI
    case metrics
    case dashboardFile(path: String)
    case chartFile(path: String)
    case loginLink
    case authLogin
    case authSession
    case authLogout
    case authLinks
    case healthz
    case readyz
    case postReports
    case postSessions
    case config
    case apps
    case releases(app: String)
    case compare(app: String)
    case rules(app: String)
    case cohorts(app: String)
    case overlay(app: String)
    case issues(app: String)
    case timeseries(app: String)
    case keyboard(app: String)
    case reports(app: String)
    case export(app: String)
    case report(id: String)
    case adminConfig(app: String)
    case adminConfigHistory(app: String)
    case adminConfigVersion(app: String, version: String)
    case adminConfigRollback(app: String)
    case adminApps
    case adminKeys(app: String)
    case adminKey(app: String, keyID: String)

    /// One path template (`{name}` segments are parameters), its methods and its route.
    struct Template: Sendable {
        var path: String
        var methods: [String]
        var make: @Sendable ([String: String]) -> Route
    }

    /// The routing table; `Resources/openapi.yaml` documents exactly these (checked by a test).
    static let templates: [Template] = [
        Template(path: "/", methods: ["GET"]) { _ in .index },
        Template(path: "/openapi.yaml", methods: ["GET"]) { _ in .openAPI },
        Template(path: "/login", methods: ["GET", "POST"]) { _ in .loginLink },
        Template(path: "/dashboard/{*path}", methods: ["GET"]) { .dashboardFile(path: $0["path"] ?? "") },
        Template(path: "/assets/chart.js/{*path}", methods: ["GET"]) { .chartFile(path: $0["path"] ?? "") },
        Template(path: "/v1/auth/login", methods: ["POST"]) { _ in .authLogin },
        Template(path: "/v1/auth/session", methods: ["GET"]) { _ in .authSession },
        Template(path: "/v1/auth/logout", methods: ["POST"]) { _ in .authLogout },
        Template(path: "/v1/auth/links", methods: ["POST"]) { _ in .authLinks },
        Template(path: "/healthz", methods: ["GET"]) { _ in .healthz },
        Template(path: "/metrics", methods: ["GET"]) { _ in .metrics },
        Template(path: "/readyz", methods: ["GET"]) { _ in .readyz },
        Template(path: "/v1/reports", methods: ["POST"]) { _ in .postReports },
        Template(path: "/v1/sessions", methods: ["POST"]) { _ in .postSessions },
        Template(path: "/v1/config", methods: ["GET"]) { _ in .config },
        Template(path: "/v1/apps", methods: ["GET"]) { _ in .apps },
        Template(path: "/v1/apps/{app}/releases", methods: ["GET"]) { .releases(app: $0["app"] ?? "") },
        Template(path: "/v1/apps/{app}/compare", methods: ["GET"]) { .compare(app: $0["app"] ?? "") },
        Template(path: "/v1/apps/{app}/rules", methods: ["GET"]) { .rules(app: $0["app"] ?? "") },
        Template(path: "/v1/apps/{app}/cohorts", methods: ["GET"]) { .cohorts(app: $0["app"] ?? "") },
        Template(path: "/v1/apps/{app}/overlay", methods: ["GET"]) { .overlay(app: $0["app"] ?? "") },
        Template(path: "/v1/apps/{app}/issues", methods: ["GET"]) { .issues(app: $0["app"] ?? "") },
        Template(path: "/v1/apps/{app}/timeseries", methods: ["GET"]) { .timeseries(app: $0["app"] ?? "") },
        Template(path: "/v1/apps/{app}/keyboard", methods: ["GET"]) { .keyboard(app: $0["app"] ?? "") },
        Template(path: "/v1/apps/{app}/reports", methods: ["GET"]) { .reports(app: $0["app"] ?? "") },
        Template(path: "/v1/apps/{app}/reports.ndjson", methods: ["GET"]) { .export(app: $0["app"] ?? "") },
        Template(path: "/v1/reports/{id}", methods: ["GET"]) { .report(id: $0["id"] ?? "") },
        Template(path: "/v1/admin/apps", methods: ["POST"]) { _ in .adminApps },
        Template(path: "/v1/admin/apps/{app}/config", methods: ["GET", "PUT", "PATCH"]) { .adminConfig(app: $0["app"] ?? "") },
        Template(path: "/v1/admin/apps/{app}/config/history", methods: ["GET"]) { .adminConfigHistory(app: $0["app"] ?? "") },
        Template(path: "/v1/admin/apps/{app}/config/history/{version}", methods: ["GET"]) {
            .adminConfigVersion(app: $0["app"] ?? "", version: $0["version"] ?? "")
        },
        Template(path: "/v1/admin/apps/{app}/config/rollback", methods: ["POST"]) { .adminConfigRollback(app: $0["app"] ?? "") },
        Template(path: "/v1/admin/apps/{app}/keys", methods: ["POST"]) { .adminKeys(app: $0["app"] ?? "") },
        Template(path: "/v1/admin/apps/{app}/keys/{key_id}", methods: ["DELETE"]) { .adminKey(app: $0["app"] ?? "", keyID: $0["key_id"] ?? "") },
    ]

    private static let splitTemplates: [([Substring], Template)] = templates.map { ($0.path.split(separator: "/", omittingEmptySubsequences: false), $0) }

    /// Templates without parameters, by path: the busiest endpoints need no segment walk.
    private static let staticTemplates: [String: Template] = Dictionary(
        templates.filter { !$0.path.contains("{") }.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })

    /// The route for a path, the methods it takes and its template (the metrics label); `nil`
    /// when no route has this path.
    static func match(path: String) -> (methods: [String], route: Route, template: String)? {
        if let template = staticTemplates[path] { return (template.methods, template.make([:]), template.path) }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        candidates: for (pattern, template) in splitTemplates {
            // `{*name}` as the last segment takes the rest of the path (one segment or more).
            let isCatchAll = pattern.last?.hasPrefix("{*") == true
            guard isCatchAll ? segments.count >= pattern.count : segments.count == pattern.count else { continue }
            var parameters: [String: String] = [:]
            if isCatchAll, let last = pattern.last {
                parameters[String(last.dropFirst(2).dropLast())] = segments[(pattern.count - 1)...].joined(separator: "/")
            }
            for (expected, actual) in zip(isCatchAll ? pattern.dropLast() : pattern[...], segments) {
                if expected.hasPrefix("{") {
                    guard !actual.isEmpty else { continue candidates }
                    parameters[String(expected.dropFirst().dropLast())] = String(actual)
                } else if expected != actual {
                    continue candidates
                }
            }
            return (template.methods, template.make(parameters), template.path)
        }
        return nil
    }
}
