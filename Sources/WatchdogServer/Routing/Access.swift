import WatchdogHTTP
import WatchdogStore

/// Who may call a route, and which app it touches. `Router` checks both, once, before the
/// handler runs; handlers only check what depends on the request (an ingest key reads its own
/// app's config) and filter what spans apps (`AppScope.filtered`).
///
/// Every access but `.open` and `.ingest` names its `AppScope`: a route cannot be added without
/// saying which app it touches, and `RouteScopeTests` walks the whole table with a token
/// limited to another app.
enum Access: Sendable, Equatable {
    /// Anyone: the dashboard's files, sign-in, health, metrics (which has its own token).
    case open
    /// Any valid credential: an ingest key, a viewer, operator or admin token, or a dashboard session.
    case anyCredential(AppScope)
    /// An app's ingest key (the handler checks the app is the key's).
    case ingest
    /// A viewer, operator or admin (stats, the dashboard, reading settings).
    case viewer(AppScope)
    /// An operator or admin: config, rollouts, alert rules and hooks, releases.
    case `operator`(AppScope)
    /// An admin: apps, ingest keys, admission and attestation settings.
    case admin(AppScope)

    /// The app the route touches; `nil` for `.open` and `.ingest` routes.
    var scope: AppScope? {
        switch self {
        case .open, .ingest: return nil
        case .anyCredential(let scope), .viewer(let scope), .operator(let scope), .admin(let scope): return scope
        }
    }

    /// Whether a caller with `role` may call the route; `.open` routes are not asked.
    func allows(_ role: CredentialRole) -> Bool {
        switch self {
        case .open, .anyCredential: return true
        case .ingest: return role == .ingest
        case .viewer: return role.includes(.viewer)
        case .operator: return role.includes(.operator)
        case .admin: return role == .admin
        }
    }

    /// The 403 message for a caller whose role is not allowed.
    func refusal(_ role: CredentialRole) -> String {
        switch self {
        case .open, .anyCredential: return "this credential is not allowed here"
        case .ingest: return "this needs an app's ingest key, not a \(role.rawValue) token"
        case .viewer: return "this needs a viewer, operator or admin token, not an ingest key"
        case .operator: return "this needs an operator or admin token; a \(role.rawValue) credential cannot change config, rollouts, alerts or releases"
        case .admin: return "this needs an admin token; a \(role.rawValue) credential cannot change apps, keys, admission or attestation"
        }
    }
}

/// Which app a route touches, for callers limited to some apps (`Principal.apps`).
enum AppScope: Sendable, Equatable {
    /// The path's `{app}`.
    case path
    /// The query's `app` (`/v1/config?app=`); an ingest key's app is checked by the handler.
    case query
    /// Every app at once (creating an app): only a caller for every app may.
    case everyApp
    /// Several apps, or one found by what the route reads (a report id): the handler shows only
    /// the apps the caller sees (`Principal.sees`).
    case filtered
    /// No app: the caller's own session or sign-in link.
    case caller

    /// Throws unless `principal` may touch the app of a request with these path `parameters`
    /// and `query`: 404 for an app outside its list, worded as for an app that does not exist.
    func check(_ principal: Principal, parameters: [String: String], query: [String: String]) throws(APIError) {
        switch self {
        case .path:
            let app = parameters["app"] ?? ""
            guard principal.sees(app) else { throw Self.hidden(app) }
        case .query:
            guard principal.role != .ingest, let app = query["app"] else { return }
            guard principal.sees(app) else { throw Self.hidden(app) }
        case .everyApp:
            guard principal.seesEveryApp else {
                throw .forbidden("this needs a token for every app; this one is limited to \(principal.apps?.joined(separator: ", ") ?? "")")
            }
        case .filtered, .caller:
            return
        }
    }

    /// The answer about an app the caller may not see: the one for an app that does not exist.
    static func hidden(_ app: String) -> APIError {
        .notFound("no app \(app.prefix(255))")
    }
}
