/// Reports of one release for one value of a dimension (`screen`, `keyboard_mode`, `idiom`,
/// `channel`) and kind.
public struct BreakdownRow: Sendable, Equatable {
    public var dimension: String
    /// Empty when the reports did not say.
    public var value: String
    public var kind: String
    public var reports: Int
    public var suspectReports: Int
    public var floodedReports: Int = 0
}

/// A release's roll-up with its breakdowns and its sessions per device idiom.
public struct ReleaseDetail: Sendable {
    public var stats: ReleaseStats
    public var breakdown: [BreakdownRow]
    public var sessionsByIdiom: [String: Int]
    /// Sessions with at least one active report, per dimension (`kind`, `screen`,
    /// `keyboard_mode`, `idiom`) and value (empty when the reports did not say).
    public var affectedSessions: [String: [String: Int]] = [:]
}

/// One fingerprint (kind + screen + view + keyboard mode) in one release.
public struct IssueRow: Sendable, Equatable {
    public var fingerprint: String
    public var release: ReleaseID
    public var kind: String
    public var screen: String?
    public var viewName: String?
    public var keyboardMode: String?
    public var reports: Int
    public var suspectReports: Int
    public var affectedSessions: Int
    public var firstSeen: Int64
    public var lastSeen: Int64
    public var floodedReports: Int = 0
}

/// Reports of one kind in one hour (hours since the epoch, UTC).
public struct HourlyRow: Sendable, Equatable {
    public var hour: Int64
    public var kind: String
    public var reports: Int
    public var suspectReports: Int
    public var floodedReports: Int = 0
    /// Sessions whose first active report of this kind in the release is dated in this hour.
    public var affectedSessions: Int = 0
}

/// How often one keyboard height (whole points) was seen for a device model, mode and input mode.
public struct HeightRow: Sendable, Equatable {
    public var model: String
    public var mode: String
    public var inputMode: String
    public var height: Int
    public var reports: Int
    /// Of those, reports whose height was ≥ 90 % of the window's.
    public var windowSized: Int
}

/// Which reports to list or export.
public struct ReportFilter: Sendable, Equatable {
    public var release: ReleaseID?
    public var kind: String?
    public var screen: String?
    public var fingerprint: String?

    public init(release: ReleaseID? = nil, kind: String? = nil, screen: String? = nil, fingerprint: String? = nil) {
        self.release = release
        self.kind = kind
        self.screen = screen
        self.fingerprint = fingerprint
    }
}

/// A stored report with what the server added.
public struct StoredReport: Sendable, Equatable {
    /// Insertion order: the pagination key (newer reports have larger ones).
    public var sequence: Int64
    public var id: String
    public var app: String
    public var release: ReleaseID
    public var kind: String
    public var fingerprint: String
    public var occurredAt: Int64
    public var receivedAt: Int64
    public var suspect: Bool
    /// Past the per-session, per-fingerprint cap when it arrived.
    public var flooded: Bool = false
    /// The report's JSON exactly as the client sent it.
    public var body: String
}
