import WatchdogStore
import WatchdogWire

/// A listed release as the admin listing shows it (after its `ReleaseRefView` members): how
/// and why it is listed, and its data.
struct ListedReleaseView: Encodable {
    /// `declared` or `admitted`.
    var state: String
    /// `auto`, `open`, `upgrade`, `cli` or the admin credential's name.
    var by: String
    var at: String
    var reason: String
    /// Whether anything of it has arrived; a release declared ahead of its data has none
    /// (and is not in `/releases` until it does).
    var hasData: Bool
    var sessions: Int
    var reports: Int

    enum CodingKeys: String, CodingKey {
        case state, by, at, reason, sessions, reports
        case hasData = "has_data"
    }

    /// The release's identity and these fields, in one object.
    static func of(_ admission: ReleaseAdmission, stats: ReleaseStats?) -> WithRelease<ListedReleaseView> {
        WithRelease(release: ReleaseRefView(release: admission.release), fields: ListedReleaseView(admission, stats: stats))
    }

    private init(_ admission: ReleaseAdmission, stats: ReleaseStats?) {
        state = admission.state.rawValue
        by = admission.by
        at = Timestamp.format(milliseconds: admission.at)
        reason = admission.reason
        hasData = stats != nil
        sessions = stats?.sessions ?? 0
        reports = stats?.allReports ?? 0
    }
}

/// How many releases are stored but not listed, and what they hold (`/releases` and the admin
/// listing): the dashboard's "N unlisted releases held apart".
struct UnlistedSummaryView: Encodable {
    var count: Int
    /// Counted session starts, and those held apart as implausible.
    var sessions: Int
    var implausibleSessions: Int
    /// Every report of them (headline, suspect and flooded).
    var reports: Int

    enum CodingKeys: String, CodingKey {
        case count, sessions, reports
        case implausibleSessions = "implausible_sessions"
    }

    init(_ unlisted: UnlistedReleases) {
        count = unlisted.total
        sessions = unlisted.sessions
        implausibleSessions = unlisted.implausibleSessions
        reports = unlisted.reports
    }
}

/// One unlisted release of a page (after its `ReleaseRefView` members).
struct UnlistedReleaseView: Encodable {
    var sessions: Int
    var implausibleSessions: Int
    var reports: Int
    var suspectReports: Int
    var floodedReports: Int
    var unknownSessionReports: Int
    var firstSeen: String
    var lastSeen: String

    enum CodingKeys: String, CodingKey {
        case sessions, reports
        case implausibleSessions = "implausible_sessions"
        case suspectReports = "suspect_reports"
        case floodedReports = "flooded_reports"
        case unknownSessionReports = "unknown_session_reports"
        case firstSeen = "first_seen"
        case lastSeen = "last_seen"
    }

    /// The release's identity and these fields, in one object.
    static func of(_ stats: ReleaseStats) -> WithRelease<UnlistedReleaseView> {
        WithRelease(release: ReleaseRefView(release: stats.release), fields: UnlistedReleaseView(stats))
    }

    private init(_ stats: ReleaseStats) {
        sessions = stats.sessions
        implausibleSessions = stats.implausibleSessions
        reports = stats.reportsByKind.values.reduce(0, +)
        suspectReports = stats.suspectReportsByKind.values.reduce(0, +)
        floodedReports = stats.floodedReportsByKind.values.reduce(0, +)
        unknownSessionReports = stats.unknownSessionReports
        firstSeen = Timestamp.format(milliseconds: stats.firstSeen)
        lastSeen = Timestamp.format(milliseconds: stats.lastSeen)
    }
}

/// The unlisted releases' totals (the members of `UnlistedSummaryView`) and one page of them.
struct UnlistedPageView: Encodable {
    var summary: UnlistedSummaryView
    var offset: Int
    var limit: Int
    /// Most session starts first, then by version and build.
    var releases: [WithRelease<UnlistedReleaseView>]

    enum CodingKeys: String, CodingKey {
        case offset, limit, releases
    }

    init(_ unlisted: UnlistedReleases, offset: Int, limit: Int) {
        summary = UnlistedSummaryView(unlisted)
        self.offset = offset
        self.limit = limit
        releases = unlisted.page.map(UnlistedReleaseView.of)
    }

    /// One object: the summary's members, then the page's.
    func encode(to encoder: any Encoder) throws {
        try summary.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(offset, forKey: .offset)
        try container.encode(limit, forKey: .limit)
        try container.encode(releases, forKey: .releases)
    }
}

/// `GET /v1/admin/apps/{app}/releases`.
struct AdmissionListView: Encodable {
    var app: String
    /// Oldest listing first.
    var listed: [WithRelease<ListedReleaseView>]
    var unlisted: UnlistedPageView
}

/// A release named in an answer.
struct ReleaseRefView: Encodable {
    var release: String
    var id: String
    var version: String
    var build: String

    init(release: ReleaseID) {
        self.release = release.text
        id = release.id
        version = release.version
        build = release.build
    }
}

/// A view's members after the release's identity (`ReleaseRefView`), in one object.
struct WithRelease<Fields: Encodable>: Encodable {
    var release: ReleaseRefView
    var fields: Fields

    func encode(to encoder: any Encoder) throws {
        try release.encode(to: encoder)
        try fields.encode(to: encoder)
    }
}

/// `DELETE /v1/admin/apps/{app}/releases/{release}`.
struct DeletedReleaseView: Encodable {
    var release: ReleaseRefView
    /// Rows removed: raw reports and session starts, roll-ups, marks, the listing.
    var deletedRows: Int

    init(release: ReleaseID, deletedRows: Int) {
        self.release = ReleaseRefView(release: release)
        self.deletedRows = deletedRows
    }

    enum CodingKeys: String, CodingKey {
        case release
        case deletedRows = "deleted_rows"
    }
}

extension ReleaseStats {
    /// Every report of the release: headline, suspect and flooded.
    public var allReports: Int {
        reportsByKind.values.reduce(0, +) + suspectReportsByKind.values.reduce(0, +) + floodedReportsByKind.values.reduce(0, +)
    }
}
