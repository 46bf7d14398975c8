/// A change proposed under four eyes (issue 41): stored with what it would do, applied only
/// when another person approves it before it expires.
public struct ProposalRecord: Sendable, Equatable {
    public var id: String
    public var app: String
    /// The kinds of change it is (`config`, `test_crash`, `rollouts`, `attestation`,
    /// `release_delete`), joined by commas.
    public var kinds: String
    /// The audit action of the change (`config.update`, `rollout.start`, …).
    public var action: String
    /// Who proposed it (a token's name, or a person's IdP subject).
    public var proposer: String
    public var createdAt: Int64
    /// After this time (milliseconds) it is never applied.
    public var expiresAt: Int64
    /// The request that makes the change, replayed on approval: method, path, query (JSON
    /// object), body, and the config document's ETag it was proposed against (if any).
    public var method: String
    public var path: String
    public var query: String
    public var body: String
    public var ifMatch: String?
    /// The dry run's answer (JSON): the document it would save and whom it would switch.
    public var impact: String?
    /// `pending`, `applying`, `approved`, `refused` or `failed` (`expired` is `pending` past
    /// `expiresAt`, worked out when read).
    public var status: String
    public var decidedBy: String?
    public var decidedAt: Int64?
    /// What applying it answered, or why it was refused.
    public var outcome: String?

    public init(id: String, app: String, kinds: String, action: String, proposer: String, createdAt: Int64, expiresAt: Int64, method: String, path: String,
                query: String, body: String, ifMatch: String?, impact: String?, status: String = "pending", decidedBy: String? = nil,
                decidedAt: Int64? = nil, outcome: String? = nil) {
        self.id = id
        self.app = app
        self.kinds = kinds
        self.action = action
        self.proposer = proposer
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.method = method
        self.path = path
        self.query = query
        self.body = body
        self.ifMatch = ifMatch
        self.impact = impact
        self.status = status
        self.decidedBy = decidedBy
        self.decidedAt = decidedAt
        self.outcome = outcome
    }
}

/// A conditional change of a proposal's status: it happens only if the proposal is still in
/// `from`, not expired at `now`, and (when `notBy` is set) not proposed by `notBy`.
public struct ProposalDecision: Sendable, Equatable {
    public var from: String
    public var to: String
    public var decidedBy: String
    public var at: Int64
    public var outcome: String?
    /// The proposal must not have expired at this time; `nil` decides whatever its age.
    public var liveAt: Int64?
    /// The proposal must not have been proposed by this person.
    public var notBy: String?

    public init(from: String, to: String, decidedBy: String, at: Int64, outcome: String? = nil, liveAt: Int64? = nil, notBy: String? = nil) {
        self.from = from
        self.to = to
        self.decidedBy = decidedBy
        self.at = at
        self.outcome = outcome
        self.liveAt = liveAt
        self.notBy = notBy
    }
}
