/// A guarded rollout of one config rule as stored: its plan, state and step history are the
/// server's JSON (`document`); the store keeps it whole and guards it with `revision`.
public struct RolloutRecord: Sendable, Equatable {
    public var app: String
    public var ruleID: String
    /// 1 for the first save, then one more per save.
    public var revision: Int
    /// `active`, `paused`, `completed`, `rolled_back` or `aborted`.
    public var status: String
    public var document: String
    public var updatedAt: Int64

    public init(app: String, ruleID: String, revision: Int, status: String, document: String, updatedAt: Int64) {
        self.app = app
        self.ruleID = ruleID
        self.revision = revision
        self.status = status
        self.document = document
        self.updatedAt = updatedAt
    }
}
