/// One row of the audit log: a change, who made it, from where, and the state before and after.
///
/// `before` and `after` are JSON the server has already stripped of secrets (token values,
/// hashes, webhook secrets, sign-in codes); the store keeps them as given.
public struct AuditEntry: Sendable, Equatable {
    /// The row's number, increasing with each row (0 for a row not yet stored).
    public var id: Int64
    /// When, in milliseconds since the epoch.
    public var at: Int64
    /// The token's name (or `guard`, or `cli:<user>`); empty for a failed sign-in.
    public var actor: String
    /// The client's address (behind a trusted proxy, the one it names); `local` for the CLI.
    public var address: String
    /// What was done: a dotted name (`AuditActions`), e.g. `config.update`, `token.add`, `signin.failed`.
    public var action: String
    /// The app changed; `nil` for changes of no one app (tokens, sign-ins).
    public var app: String?
    public var before: String?
    public var after: String?

    public init(id: Int64 = 0, at: Int64, actor: String, address: String, action: String, app: String?, before: String? = nil, after: String? = nil) {
        self.id = id
        self.at = at
        self.actor = actor
        self.address = address
        self.action = action
        self.app = app
        self.before = before
        self.after = after
    }
}

/// Which audit rows to read.
public struct AuditFilter: Sendable, Equatable {
    /// Rows of this app only.
    public var app: String?
    /// Rows of these apps only (a caller limited to some apps); `nil` for every row, apps or not.
    public var visibleApps: [String]?
    public var actor: String?
    public var action: String?
    /// `at` at or after, in milliseconds.
    public var from: Int64?
    /// `at` before, in milliseconds.
    public var to: Int64?

    public init(app: String? = nil, visibleApps: [String]? = nil, actor: String? = nil, action: String? = nil, from: Int64? = nil, to: Int64? = nil) {
        self.app = app
        self.visibleApps = visibleApps
        self.actor = actor
        self.action = action
        self.from = from
        self.to = to
    }
}
