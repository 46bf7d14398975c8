/// Every endpoint watchdogd serves, matched from method and path.
enum Route: Equatable {
    case index
    case openAPI
    case healthz
    case readyz
    case postReports
    case postSessions
    case config
    case apps
    case releases(app: String)
    case adminConfig(app: String)
    case adminApps
    case adminKeys(app: String)
    case adminKey(app: String, keyID: String)

    /// The route for a path and the methods it takes; `nil` when no route has this path.
    static func match(path: String) -> (methods: [String], route: Route)? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        switch segments {
        case [""]: return (["GET"], .index)
        case ["openapi.yaml"]: return (["GET"], .openAPI)
        case ["healthz"]: return (["GET"], .healthz)
        case ["readyz"]: return (["GET"], .readyz)
        case ["v1", "reports"]: return (["POST"], .postReports)
        case ["v1", "sessions"]: return (["POST"], .postSessions)
        case ["v1", "config"]: return (["GET"], .config)
        case ["v1", "apps"]: return (["GET"], .apps)
        case ["v1", "admin", "apps"]: return (["POST"], .adminApps)
        default: break
        }
        if segments.count == 4, segments[0] == "v1", segments[1] == "apps", segments[3] == "releases", !segments[2].isEmpty {
            return (["GET"], .releases(app: segments[2]))
        }
        if segments.count == 5, segments[0] == "v1", segments[1] == "admin", segments[2] == "apps", !segments[3].isEmpty {
            switch segments[4] {
            case "config": return (["GET", "PATCH"], .adminConfig(app: segments[3]))
            case "keys": return (["POST"], .adminKeys(app: segments[3]))
            default: return nil
            }
        }
        if segments.count == 6, segments[0] == "v1", segments[1] == "admin", segments[2] == "apps", segments[4] == "keys",
           !segments[3].isEmpty, !segments[5].isEmpty {
            return (["DELETE"], .adminKey(app: segments[3], keyID: segments[5]))
        }
        return nil
    }
}
