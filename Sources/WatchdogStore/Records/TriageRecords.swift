/// What a person said about one issue (fingerprint) of an app: resolved (in a release, or in
/// the next one), muted (until a time or a number of more affected sessions), or open again.
/// One row per app and fingerprint, replaced by each change; the audit log keeps the history.
/// Whether a resolved issue regressed is not stored: it is read from the listed releases after
/// `resolvedIn` (the server's `IssueTriage`).
public struct IssueTriageRecord: Sendable, Equatable {
    public var app: String
    public var fingerprint: String
    /// `resolved` or `open` (reopened). A mute is on top of either (`muteUntil`, `muteSessions`).
    public var resolution: String
    /// The listed release it was resolved in (or, for `nextRelease`, the newest listed release
    /// when it was resolved: the fix ships in the next one listed after it).
    public var resolvedIn: ReleaseID?
    /// Resolved in the next release: reports in the first listed release after `resolvedIn`
    /// are the fix's own release and count as a regression; without it, that release counts too.
    public var nextRelease: Bool
    /// When the resolution was made (the regression alert's key: one per resolution).
    public var resolvedAt: Int64?
    /// Muted until this time (ms since the epoch).
    public var muteUntil: Int64?
    /// Muted until this many more sessions are affected than `muteBaseline`.
    public var muteSessions: Int?
    /// Affected sessions of the fingerprint in the listed releases when it was muted.
    public var muteBaseline: Int
    public var note: String
    public var changedBy: String
    public var changedAt: Int64

    public init(app: String, fingerprint: String, resolution: String, resolvedIn: ReleaseID? = nil, nextRelease: Bool = false, resolvedAt: Int64? = nil,
                muteUntil: Int64? = nil, muteSessions: Int? = nil, muteBaseline: Int = 0, note: String = "", changedBy: String, changedAt: Int64) {
        self.app = app
        self.fingerprint = fingerprint
        self.resolution = resolution
        self.resolvedIn = resolvedIn
        self.nextRelease = nextRelease
        self.resolvedAt = resolvedAt
        self.muteUntil = muteUntil
        self.muteSessions = muteSessions
        self.muteBaseline = muteBaseline
        self.note = note
        self.changedBy = changedBy
        self.changedAt = changedAt
    }
}
