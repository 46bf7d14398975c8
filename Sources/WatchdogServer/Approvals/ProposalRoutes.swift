import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// The routes of four eyes: an app's approval settings, its proposals, and approving or
/// refusing one. Approving replays the stored request through the route it was made to, as
/// the approver (who must hold the role that route needs, and must not be the proposer).
struct ProposalRoutes: Sendable {
    let fourEyes: FourEyes

    private var store: any TelemetryStore { fourEyes.store }

    /// `GET /v1/admin/apps/{app}/approvals`: `{"require": [...]}`.
    func settings(app: String) throws(APIError) -> HTTPResponse {
        guard try storeCall({ try store.appExists(app) }) else { throw .notFound("no app \(app)") }
        let kinds = try storeCall { try store.approvalRequirements(app: app) }
        return JSONBody.response(JSONValue.object(["require": .array(kinds.map(JSONValue.string)), "kinds": .array(ApprovalKind.allCases.map { .string($0.rawValue) })]))
    }

    /// `PUT /v1/admin/apps/{app}/approvals {"require": ["test_crash", …]}` (admin).
    func saveSettings(_ request: HTTPRequest, app: String) throws(APIError) -> HTTPResponse {
        guard case .object(let fields)? = JSONValue.parse(request.body), fields.count == 1, case .array(let names)? = fields["require"],
              names.count <= ApprovalKind.allCases.count * 2 else {
            throw .badRequest("invalid_shape", "the body must be {\"require\": [...]} with kinds of \(ApprovalKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var texts: [String] = []
        for name in names {
            guard case .string(let text) = name else { throw .badRequest("invalid_field", "require must hold strings") }
            texts.append(text)
        }
        let kinds = try ApprovalKind.parse(texts)
        AuditNote.set(before: .array(try storeCall { try store.approvalRequirements(app: app) }.map(JSONValue.string)), after: .array(kinds.map { .string($0.rawValue) }))
        do {
            try store.saveApprovalRequirements(app: app, kinds: kinds.map(\.rawValue))
        } catch StoreError.unknownApp {
            throw .notFound("no app \(app)")
        } catch {
            throw try Self.storeError(error)
        }
        return try settings(app: app)
    }

    /// `GET /v1/admin/apps/{app}/proposals[?status=pending]`: newest first, at most 200.
    func list(_ request: HTTPRequest, app: String) throws(APIError) -> HTTPResponse {
        guard try storeCall({ try store.appExists(app) }) else { throw .notFound("no app \(app)") }
        let wanted = request.query["status"]
        let statuses = ["pending", "expired", "applying", "approved", "refused", "failed"]
        if let wanted, !statuses.contains(wanted) {
            throw .badRequest("invalid_parameter", "status must be one of \(statuses.joined(separator: ", ")), got \"\(wanted.prefix(20))\"")
        }
        let now = fourEyes.clock()
        let proposals = ProposalSettling(store: store).settled(try storeCall { try store.proposals(app: app, limit: 200) }, now: now)
        let views = proposals.map { ProposalView.view($0, now: now) }
        let shown = views.filter { view in
            guard let wanted, case .object(let fields) = view else { return true }
            return fields["status"] == .string(wanted)
        }
        return JSONBody.response(JSONValue.object(["proposals": .array(shown)]))
    }

    /// `POST …/proposals/{id}/approve`: applies the change as it was proposed.
    func approve(_ request: HTTPRequest, app: String, id: String, approver: Principal, address: String) throws(APIError) -> HTTPResponse {
        let proposal = try found(app: app, id: id)
        guard proposal.proposer != approver.person else {
            throw .forbidden("\(approver.person) proposed this change; another person must approve it (four eyes)")
        }
        try Self.checkLive(proposal, now: fourEyes.clock())
        guard let routes = fourEyes.routes, let (route, parameters) = try? routes.route(method: proposal.method, path: proposal.path) else { throw .internalError }
        guard route.access.allows(approver.role) else { throw .forbidden("approving this change needs what making it needs: " + route.access.refusal(approver.role)) }
        try route.access.scope?.check(approver, parameters: parameters, query: [:])
        // Claimed with the approval's audit row: only one approval applies it, and never late.
        AuditNote.set(before: nil, after: .object(["proposal": .string(id), "action": .string(proposal.action), "proposer": .string(proposal.proposer)]))
        let now = fourEyes.clock()
        let claimed = try storeCall {
            try store.decideProposal(app: app, id: id, ProposalDecision(from: "pending", to: "applying", decidedBy: approver.name, at: now, liveAt: now, notBy: approver.person))
        }
        guard claimed else { throw Self.notPending(try found(app: app, id: id), now: now) }
        var replay = HTTPRequest(method: proposal.method, path: proposal.path, body: Array(proposal.body.utf8), clientAddress: request.clientAddress)
        if case .object(let query)? = JSONValue.parse(Array(proposal.query.utf8)) {
            for case (let name, .string(let value)) in query { replay.query[name] = value }
        }
        if let ifMatch = proposal.ifMatch { replay.headers.add(name: "If-Match", value: ifMatch) }
        var proposer = approver
        proposer.name = proposal.proposer
        // The change's row: the proposer's, with the approval (kept when the handler sets the
        // state before and after, `AuditNote`).
        let entry = fourEyes.audit.entry(proposal.action, app: app, actor: proposal.proposer, address: address, after: .object([
            "approval": .object(["proposal": .string(proposal.id), "approved_by": .string(approver.name)]),
            "body": JSONValue.parse(Array(proposal.body.utf8)) ?? .null,
        ]))
        let answer: HTTPResponse
        do throws(APIError) {
            let response = try fourEyes.audit.around(entry) { () throws(APIError) in try route.handler(replay, RequestContext(parameters: parameters, caller: proposer)) }
            guard case .now(let now) = response else { throw .internalError }
            answer = now
        } catch {
            _ = try? store.decideProposal(app: app, id: id, ProposalDecision(from: "applying", to: "failed", decidedBy: approver.name, at: fourEyes.clock(),
                                                                             outcome: "\(error.status) \(error.code): \(error.message)"))
            throw APIError(status: 409, code: "proposal_failed", message: "approved, but applying it failed (the proposal is now failed): \(error.message)")
        }
        _ = try storeCall {
            try store.decideProposal(app: app, id: id, ProposalDecision(from: "applying", to: "approved", decidedBy: approver.name, at: fourEyes.clock(),
                                                                        outcome: "\(answer.status)"))
        }
        let applied = try found(app: app, id: id)
        return JSONBody.response(JSONValue.object([
            "applied": .bool(true),
            "proposal": ProposalView.view(applied, now: fourEyes.clock()),
            "result": JSONValue.parse(answer.body) ?? .null,
        ]))
    }

    /// `POST …/proposals/{id}/refuse [{"reason": "…"}]`: it is never applied. Anyone who may
    /// approve it may refuse it, and so may its proposer (withdrawing it).
    func refuse(_ request: HTTPRequest, app: String, id: String, refuser: Principal) throws(APIError) -> HTTPResponse {
        var reason: String?
        if !request.body.isEmpty {
            guard case .object(let fields)? = JSONValue.parse(request.body), Set(fields.keys).isSubset(of: ["reason"]) else {
                throw .badRequest("invalid_shape", "the body must be empty or {\"reason\": \"…\"}")
            }
            if let value = fields["reason"] {
                guard case .string(let text) = value, text.unicodeScalars.count <= 500 else { throw .badRequest("invalid_field", "reason must be a string of at most 500 characters") }
                reason = text
            }
        }
        let proposal = try found(app: app, id: id)
        if proposal.proposer != refuser.person, let routes = fourEyes.routes, let (route, _) = try? routes.route(method: proposal.method, path: proposal.path),
           !route.access.allows(refuser.role) {
            throw .forbidden("refusing this change needs what making it needs: " + route.access.refusal(refuser.role))
        }
        let now = fourEyes.clock()
        AuditNote.set(before: nil, after: .object(["proposal": .string(id), "action": .string(proposal.action), "reason": reason.map(JSONValue.string) ?? .null]))
        let refused = try storeCall {
            try store.decideProposal(app: app, id: id, ProposalDecision(from: "pending", to: "refused", decidedBy: refuser.name, at: now, outcome: reason, liveAt: now))
        }
        guard refused else { throw Self.notPending(try found(app: app, id: id), now: now) }
        return JSONBody.response(JSONValue.object(["applied": .bool(false), "proposal": ProposalView.view(try found(app: app, id: id), now: now)]))
    }

    private func found(app: String, id: String) throws(APIError) -> ProposalRecord {
        guard id.utf8.count <= 64, let proposal = try storeCall({ try store.proposal(app: app, id: id) }) else { throw .notFound("no proposal \(id.prefix(64)) for app \(app)") }
        return ProposalSettling(store: store).settled([proposal], now: fourEyes.clock())[0]
    }

    private static func checkLive(_ proposal: ProposalRecord, now: Int64) throws(APIError) {
        guard proposal.status == "pending", proposal.expiresAt > now else { throw notPending(proposal, now: now) }
    }

    /// The 409 of a proposal that can no longer be decided: expired, or decided already.
    private static func notPending(_ proposal: ProposalRecord, now: Int64) -> APIError {
        if proposal.status == "pending" && proposal.expiresAt <= now {
            return APIError(status: 409, code: "proposal_expired", message: "proposal \(proposal.id) expired at \(Timestamp.format(milliseconds: proposal.expiresAt)) and will never be applied; propose the change again")
        }
        return APIError(status: 409, code: "proposal_decided", message: "proposal \(proposal.id) is \(proposal.status)\(proposal.decidedBy.map { " (by \($0))" } ?? ""); it can be decided once only")
    }

    private static func storeError(_ error: any Error) throws(APIError) -> APIError {
        if let unreachable = APIError.storeUnreachable(from: error) { return unreachable }
        return .unavailable("the store could not be written: \(error)")
    }
}
