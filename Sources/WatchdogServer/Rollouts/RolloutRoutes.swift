import WatchdogHTTP

/// `/v1/admin/apps/{app}/rollouts…` (admin tokens): start a guarded rollout of a config rule,
/// list and read them, and a person's pause, resume, advance (one step) and abort. The guard
/// itself runs on `RolloutService`'s thread.
struct RolloutRoutes: Sendable {
    let rollouts: RolloutService

    func list(app: String) throws(APIError) -> HTTPResponse {
        let all = try rollouts.rollouts(app: app)
        return try Self.response(RolloutsView(app: app, rollouts: all))
    }

    func get(app: String, rule: String) throws(APIError) -> HTTPResponse {
        try Self.response(try rollouts.rollout(app: app, rule: rule))
    }

    /// `POST …/rollouts {"rule": …, "steps": […], …}` → 201 with the rollout at its first step.
    func start(_ request: HTTPRequest, app: String, principal: Principal) throws(APIError) -> HTTPResponse {
        let fields = try AlertRoutes.object(request, example: RolloutPlanReader.example, allowed: RolloutPlanReader.fields)
        let rule = try RolloutPlanReader.rule(fields)
        // The plan is read once the app and the rule are known (an unknown one is a 404 first).
        return try Self.response(status: 201, try rollouts.start(app: app, rule: rule, actor: principal.name) { () throws(APIError) in try RolloutPlanReader.read(fields).plan })
    }

    /// `POST …/rollouts/{rule}/{action}`: `pause`, `resume`, `advance` or `abort`; no body.
    func act(_ request: HTTPRequest, action: String, app: String, rule: String, principal: Principal) throws(APIError) -> HTTPResponse {
        guard request.body.isEmpty || JSONValue.parse(request.body).map({ $0 == .object([:]) }) == true else {
            throw .badRequest("invalid_shape", "\(action) takes no body (or {})")
        }
        return try Self.response(try rollouts.act(action, app: app, rule: rule, actor: principal.name))
    }

    static func response(status: Int = 200, _ body: some Encodable) throws(APIError) -> HTTPResponse {
        do {
            return JSONBody.response(status: status, bytes: Array(try RolloutService.encoder.encode(body)))
        } catch {
            throw .internalError
        }
    }
}

/// `GET …/rollouts`.
struct RolloutsView: Encodable {
    var app: String
    var rollouts: [Rollout]
}
