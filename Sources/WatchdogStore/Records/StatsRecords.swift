/// An app and its releases.
public struct AppSummary: Sendable, Equatable {
    public var app: String
    public var createdAt: Int64
    public var releases: [ReleaseID]
}

/// `version (build)`.
public struct ReleaseID: Sendable, Hashable {
    public var version: String
    public var build: String

    public init(version: String, build: String) {
        self.version = version
        self.build = build
    }
}

/// The roll-up of one release, kept up to date as reports and sessions arrive.
public struct ReleaseStats: Sendable, Equatable {
    public var release: ReleaseID
    public var sessions: Int
    /// Reports from the `active` app state, per kind.
    public var reportsByKind: [String: Int]
    /// Reports from `inactive`/`background`, per kind: counted apart.
    public var suspectReportsByKind: [String: Int]
    /// Sessions with at least one report from the `active` state.
    public var affectedSessions: Int
    public var autoFixed: Int
    public var testCrashes: Int
    /// Earliest and latest `occurred_at`/`started_at` seen, in ms since the epoch.
    public var firstSeen: Int64
    public var lastSeen: Int64
    /// Items clients evicted from a full outbox / quarantined, as they reported (`client_dropped`).
    public var clientEvicted = 0
    public var clientQuarantined = 0
}
