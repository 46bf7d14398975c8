import Locking
import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// Four eyes (issue 41, point 3): on an app that requires approval for a kind of change, the
/// change's route does not apply it but stores it as a proposal with its dry run's impact
/// (answering 202), and a different person with the role the route needs applies it by
/// approving it — within 24 hours of the server's clock, or never.
///
/// `Router` asks `proposal(for:…)` before running a change's handler; `approve` replays the
/// stored request through the same route table (`routes`, set once the table is built).
final class FourEyes: Sendable {
    let store: any TelemetryStore
    let config: ConfigService
    let clock: @Sendable () -> Int64
    let audit: AuditLog
    private let table = Locked<RouteMatcher?>(nil)

    init(store: any TelemetryStore, config: ConfigService, clock: @escaping @Sendable () -> Int64, audit: AuditLog) {
        self.store = store
        self.config = config
        self.clock = clock
        self.audit = audit
    }

    /// The route table approvals replay through (set once, after it is built).
    var routes: RouteMatcher? {
        get { table.withLock { $0 } }
        set { table.withLock { $0 = newValue } }
    }

    // MARK: Proposing

    /// The 202 answer of a change that needs approval on its app, after storing it as a
    /// proposal; `nil` when the change may be applied at once (no kind of it is required).
    func proposal(for route: Route, _ request: HTTPRequest, caller: Principal, context: RequestContext, address: String) throws(APIError) -> Response? {
        guard let app = context.parameters["app"], Self.gated.contains("\(route.method) \(route.path)") else { return nil }
        let required = Set(try storeCall { try store.approvalRequirements(app: app) })
        guard !required.isEmpty else { return nil }
        let (kinds, impact, ifMatch) = try classify(route, request, context: context, app: app)
        guard kinds.contains(where: { required.contains($0.rawValue) }) else { return nil }
        let now = clock()
        // Bounded: an app holds at most `pendingLimit` proposals waiting at once.
        let waiting = try storeCall { try store.proposals(app: app, limit: Self.pendingLimit + 1) }.filter { $0.status == "pending" && $0.expiresAt > now }
        guard waiting.count < Self.pendingLimit else {
            throw APIError(status: 409, code: "too_many_proposals",
                           message: "\(app) has \(Self.pendingLimit) changes waiting for approval; approve or refuse some (GET /v1/admin/apps/\(app)/proposals) first")
        }
        var query = request.query
        query["dry_run"] = nil
        let action = AuditActions.name(method: route.method, template: route.path, parameters: context.parameters)
        let record = ProposalRecord(
            id: Self.newID(), app: app, kinds: kinds.map(\.rawValue).joined(separator: ","), action: action, proposer: caller.person,
            createdAt: now, expiresAt: now + ApprovalKind.proposalLifetimeMilliseconds, method: route.method, path: request.path,
            query: Self.text(.object(query.mapValues(JSONValue.string))), body: String(decoding: request.body, as: UTF8.self),
            ifMatch: ifMatch, impact: impact.map(Self.text))
        let entry = audit.entry("proposal.create", app: app, actor: caller.name, address: address, after: .object([
            "proposal": .string(record.id), "action": .string(action), "kinds": .array(kinds.map { .string($0.rawValue) }),
            "body": JSONValue.parse(request.body) ?? .null,
        ]))
        try audit.around(entry) { () throws(APIError) in try storeCall { try store.createProposal(record) } }
        let view = ProposalView.view(record, now: now)
        return .now(JSONBody.response(status: 202, JSONValue.object([
            "applied": .bool(false),
            "message": .string("not applied: \(app) requires a second person's approval for \(kinds.map(\.rawValue).joined(separator: ", ")) changes; "
                + "proposal \(record.id) waits until \(Timestamp.format(milliseconds: record.expiresAt)) for another operator or admin to approve it "
                + "(POST /v1/admin/apps/\(app)/proposals/\(record.id)/approve) or refuse it"),
            "proposal": view,
        ])))
    }

    /// The most proposals of an app waiting at once.
    static let pendingLimit = 100

    /// The routes a proposal can stand for.
    static let gated: Set<String> = [
        "PUT /v1/admin/apps/{app}/config", "PATCH /v1/admin/apps/{app}/config", "POST /v1/admin/apps/{app}/config/rollback",
        "POST /v1/admin/apps/{app}/rollouts", "PUT /v1/admin/apps/{app}/attestation", "DELETE /v1/admin/apps/{app}/releases/{release}",
    ]

    /// The kinds a change is, its dry run's impact, and (for config) the ETag it is proposed
    /// against. An invalid change throws here, as its route would (nothing is proposed).
    private func classify(_ route: Route, _ request: HTTPRequest, context: RequestContext, app: String)
        throws(APIError) -> (kinds: [ApprovalKind], impact: JSONValue?, ifMatch: String?) {
        switch route.path {
        case "/v1/admin/apps/{app}/config", "/v1/admin/apps/{app}/config/rollback":
            // The route's own dry run: it checks the change and says whom it would switch.
            var dryRun = request
            dryRun.query["dry_run"] = "true"
            guard case .now(let answer) = try route.handler(dryRun, context), let impact = JSONValue.parse(answer.body) else { throw .internalError }
            let current = try storeCall { try config.document(app: app) }
            let ifMatch = request.headers["if-match"] ?? current?.etag
            var kinds: [ApprovalKind] = [.config]
            if case .object(let fields) = impact, let after = fields["document"], Self.testCrashSwitches(after) != Self.testCrashSwitches(current?.adminView ?? .null),
               !Self.testCrashSwitches(after).isEmpty {
                kinds.append(.testCrash)
            }
            return (kinds, impact, ifMatch)
        case "/v1/admin/apps/{app}/rollouts":
            return ([.rollouts], .object(["summary": .string("starts a guarded rollout of the rule in the body, step by step, watched by the guard")]), nil)
        case "/v1/admin/apps/{app}/attestation":
            guard case .object(let fields)? = JSONValue.parse(request.body), fields["mode"] == .string("require") else { return ([], nil, nil) }
            return ([.attestation], .object(["summary": .string("uploads of devices whose key is not attested are refused")]), nil)
        case "/v1/admin/apps/{app}/releases/{release}":
            guard request.query["confirm"] != nil else { return ([], nil, nil) }  // the route explains what deleting removes
            // Without its confirmation the route says what deleting would remove: that is the impact.
            var unconfirmed = request
            unconfirmed.query["confirm"] = nil
            do throws(APIError) {
                _ = try route.handler(unconfirmed, context)
                throw .internalError
            } catch where error.code == "confirmation_required" {
                return ([.releaseDelete], .object(["summary": .string(error.message)]), nil)
            }
        default:
            return ([], nil, nil)
        }
    }

    /// Where a config document turns `test_crash` on: the defaults, and each rule (with what it
    /// matches) that sets it. A change of these that leaves any on is a `test_crash` change.
    static func testCrashSwitches(_ document: JSONValue) -> [String] {
        guard case .object(let fields) = document else { return [] }
        var switches: [String] = []
        if case .object(let defaults)? = fields["defaults"], defaults["test_crash"] == .bool(true) { switches.append("defaults") }
        if case .array(let rules)? = fields["rules"] {
            for rule in rules {
                guard case .object(let members) = rule, case .object(let set)? = members["set"], set["test_crash"] == .bool(true) else { continue }
                switches.append(text(rule))
            }
        }
        return switches
    }

    static func text(_ value: JSONValue) -> String {
        String(decoding: (try? JSONBody.encode(value)) ?? [], as: UTF8.self)
    }

    static func newID() -> String {
        "prp_" + (0..<4).map { _ in String(format: "%04x", UInt16.random(in: 0...UInt16.max)) }.joined()
    }
}
