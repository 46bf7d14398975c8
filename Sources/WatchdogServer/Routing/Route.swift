import WatchdogHTTP
import WatchdogStore

/// One endpoint: method, path template, who may call it and the handler that answers it.
///
/// `{name}` segments are parameters (`context["name"]`); `{*name}` as the last segment takes
/// the rest of the path. The whole table is `Routes.table` — `Resources/openapi.yaml`
/// documents exactly its paths and methods (checked by `OpenAPISyncTests`).
struct Route: Sendable {
    typealias Handler = @Sendable (HTTPRequest, RequestContext) throws(APIError) -> Response

    var method: String
    var path: String
    var access: Access
    var handler: Handler

    init(_ method: String, _ path: String, _ access: Access, _ handler: @escaping Handler) {
        self.method = method
        self.path = path
        self.access = access
        self.handler = handler
    }
}

/// What the router knows about a request besides the request itself: the path's parameters
/// and, on routes that need one, the authenticated caller.
struct RequestContext: Sendable {
    var parameters: [String: String]
    /// Set on every route whose access is not `.open`.
    var caller: Principal?

    /// A path parameter of the route's template (`{app}` → `context["app"]`).
    subscript(name: String) -> String { parameters[name] ?? "" }

    /// The authenticated caller; only `.open` routes have none.
    func principal() throws(APIError) -> Principal {
        guard let caller else { throw .internalError }
        return caller
    }
}

/// Finds the route of a method and path.
struct RouteMatcher: Sendable {
    /// The routes of one path template, by method.
    struct Template: Sendable {
        var path: String
        var segments: [Substring]
        var routes: [String: Route]
        var methods: [String]
    }

    private let templates: [Template]
    /// Templates without parameters, by path: the busiest endpoints need no segment walk.
    private let staticTemplates: [String: Int]

    init(_ routes: [Route]) {
        var templates: [Template] = []
        for route in routes {
            if let index = templates.firstIndex(where: { $0.path == route.path }) {
                templates[index].routes[route.method] = route
                templates[index].methods.append(route.method)
            } else {
                templates.append(Template(path: route.path, segments: route.path.split(separator: "/", omittingEmptySubsequences: false),
                                          routes: [route.method: route], methods: [route.method]))
            }
        }
        self.templates = templates
        var staticTemplates: [String: Int] = [:]
        for (index, template) in templates.enumerated() where !template.path.contains("{") { staticTemplates[template.path] = index }
        self.staticTemplates = staticTemplates
    }

    /// Every method and template, in table order (for the OpenAPI sync test).
    var endpoints: [(path: String, methods: [String])] { templates.map { ($0.path, $0.methods) } }

    /// The template of a path and its parameters; `nil` when no route has this path.
    func match(path: String) -> (template: Template, parameters: [String: String])? {
        if let index = staticTemplates[path] { return (templates[index], [:]) }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        candidates: for template in templates {
            let pattern = template.segments
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
            return (template, parameters)
        }
        return nil
    }

    /// The route for a request's method (`HEAD` is answered by `GET`), or the error to send.
    func route(method: String, path: String) throws(APIError) -> (route: Route, parameters: [String: String]) {
        guard let (template, parameters) = match(path: path) else { throw Self.unknownPath(path) }
        return (try Self.route(for: method, in: template), parameters)
    }

    /// The 404 for a path no route has.
    static func unknownPath(_ path: String) -> APIError {
        .notFound("no endpoint \(path.prefix(200)); see /openapi.yaml for the API")
    }

    /// The route of a matched template for a method (`HEAD` is answered by `GET`), or 405.
    static func route(for method: String, in template: Template) throws(APIError) -> Route {
        let wanted = method == "HEAD" && template.routes["GET"] != nil ? "GET" : method
        guard let route = template.routes[wanted] else { throw .methodNotAllowed(method, allowed: template.methods) }
        return route
    }
}
