import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// `GET /v1/apps/{app}/issues`: a release's reports grouped by fingerprint, each against the
/// previous release (with sessions) by the same affected-session comparison as `compare`.
struct IssueRoutes: Sendable {
    let lookup: ReleaseLookup

    /// `regressed` also needs this many affected sessions in the release: a significant rise
    /// from 1 to 4 sessions is not worth a badge.
    static let minimumAffectedSessionsForRegressed = 5

    private var store: any TelemetryStore { lookup.store }

    func issues(app: String, request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let releases = ReleaseOrder.sorted(try lookup.releases(of: app), by: \.release)
        guard !releases.isEmpty else { throw .notFound("app \(app) has no releases yet") }
        let current = try request.query["release"].map { text throws(APIError) in try ReleaseResolver(releases: releases).resolve(text, parameter: "release") }
            ?? releases[releases.count - 1]
        let limit = try ReleaseLookup.limit(request.query["limit"], default: 100, maximum: 1000)
        return JSONBody.response(try issues(app: app, releases: releases, current: current, limit: limit))
    }

    /// The issues of `current` (the `limit` with the most affected sessions), each against the
    /// previous release with sessions; `releases` oldest first. What `issues` answers, and what
    /// the `new_issue` alert reads.
    func issues(app: String, releases: [ReleaseStats], current: ReleaseStats, limit: Int) throws(APIError) -> IssuesView {
        let rows = try storeCall { try store.issues(app: app, release: current.release) }
            .sorted { ($0.affectedSessions, $0.reports, $1.fingerprint) > ($1.affectedSessions, $1.reports, $0.fingerprint) }
            .prefix(limit)
        let fingerprints = rows.map(\.fingerprint)
        let index = releases.firstIndex { $0.release == current.release } ?? releases.count - 1
        let previous = releases[..<index].last { $0.sessions > 0 }
        // A fingerprint's first release is the earliest with headline reports (suspect- or
        // flood-only rows do not make it "seen"), or this one: only older releases are asked.
        let firstReleases = try storeCall { try store.firstReleases(app: app, fingerprints: fingerprints, among: releases[..<index].map(\.release)) }
        let previousRows = try previous.map { previous throws(APIError) in
            try storeCall { try store.issues(app: app, release: previous.release, fingerprints: fingerprints) }
                .filter { $0.reports > 0 }
        } ?? []
        let previousByFingerprint = Dictionary(previousRows.map { ($0.fingerprint, $0) }, uniquingKeysWith: { first, _ in first })
        // Issues have no per-install counts: each side takes its release's overall design effect.
        let currentEffect = try lookup.designEffect(current, of: app)
        let previousEffect = try previous.map { release throws(APIError) in try lookup.designEffect(release, of: app) } ?? 1
        let issues = rows.map { row -> IssueView in
            let first = firstReleases[row.fingerprint] ?? row.release
            let isNew = first == current.release
            var before: IssueRow?
            var trend: SessionComparison?
            if let previous {
                before = previousByFingerprint[row.fingerprint]
                trend = SessionComparison(
                    base: SessionComparison.Side(sessions: previous.sessions, affectedSessions: before?.affectedSessions ?? 0,
                                                 reports: before?.reports ?? 0, floodedReports: before?.floodedReports ?? 0, designEffect: previousEffect),
                    target: SessionComparison.Side(sessions: current.sessions, affectedSessions: row.affectedSessions,
                                                   reports: row.reports, floodedReports: row.floodedReports, designEffect: currentEffect))
            }
            if current.partialHistory || previous?.partialHistory == true { trend = trend?.withheld(SessionComparison.partialHistoryReason) }
            let regressed = !isNew && trend?.verdict == "regressed" && row.affectedSessions >= Self.minimumAffectedSessionsForRegressed
            return IssueView(row: row, sessions: current.sessions, firstRelease: first, isNew: isNew, regressed: regressed,
                             previous: previous.map { PreviousRelease(release: $0, row: before) }, trend: trend)
        }
        return IssuesView(app: app, release: current.release.text, id: current.release.id, sessions: current.sessions, issues: issues)
    }
}

struct IssueView: Encodable {
    var fingerprint: String
    /// Kind, view, screen and keyboard mode in words.
    var title: String
    var kind: String
    @NullWhenAbsent var screen: String? = nil
    @NullWhenAbsent var view: String? = nil
    @NullWhenAbsent var keyboardMode: String? = nil
    var reports: Int
    var suspectReports: Int
    var floodedReports: Int
    var affectedSessions: Int
    @NullWhenAbsent var affectedSessionRate: Double? = nil
    @NullWhenAbsent var reportsPer1kSessions: Double? = nil
    var firstSeen: String
    var lastSeen: String
    var firstRelease: String
    /// First seen in this release. Never together with `regressed`.
    var isNew: Bool
    /// Affected-session rate significantly above the previous release's, with enough sessions.
    var regressed: Bool
    @NullWhenAbsent var previousRelease: String? = nil
    /// The same fingerprint in the previous release with sessions, so the badge can be checked.
    @NullWhenAbsent var previous: PreviousRelease? = nil
    /// This release against the previous one, when there is one.
    @NullWhenAbsent var trend: SessionComparison? = nil

    init(row: IssueRow, sessions: Int, firstRelease: ReleaseID, isNew: Bool, regressed: Bool, previous: PreviousRelease?, trend: SessionComparison?) {
        fingerprint = row.fingerprint
        title = Self.title(kind: row.kind, view: row.viewName, screen: row.screen, keyboardMode: row.keyboardMode)
        kind = row.kind
        screen = row.screen
        view = row.viewName
        keyboardMode = row.keyboardMode
        reports = row.reports
        suspectReports = row.suspectReports
        floodedReports = row.floodedReports
        affectedSessions = row.affectedSessions
        if sessions > 0 {
            affectedSessionRate = Double(min(row.affectedSessions, sessions)) / Double(sessions)
            reportsPer1kSessions = Double(row.reports) * 1000 / Double(sessions)
        }
        firstSeen = Timestamp.format(milliseconds: row.firstSeen)
        lastSeen = Timestamp.format(milliseconds: row.lastSeen)
        self.firstRelease = firstRelease.text
        self.isNew = isNew
        self.regressed = regressed
        previousRelease = previous?.release
        self.previous = previous
        self.trend = trend
    }

    /// `View frame mismatch · composeToolbar on ComposeViewController (docked)`.
    static func title(kind: String, view: String?, screen: String?, keyboardMode: String?) -> String {
        let words = kind.hasPrefix("x-") ? kind : kind.split(separator: "_").joined(separator: " ")
        var title = words.prefix(1).uppercased() + words.dropFirst()
        switch (view, screen) {
        case let (view?, screen?): title += " · \(view) on \(screen)"
        case let (view?, nil): title += " · \(view)"
        case let (nil, screen?): title += " on \(screen)"
        case (nil, nil): break
        }
        if let keyboardMode { title += " (\(keyboardMode))" }
        return title
    }

    enum CodingKeys: String, CodingKey {
        case fingerprint, title, kind, screen, view, reports, regressed, trend, previous
        case keyboardMode = "keyboard_mode"
        case suspectReports = "suspect_reports"
        case floodedReports = "flooded_reports"
        case affectedSessions = "affected_sessions"
        case affectedSessionRate = "affected_session_rate"
        case reportsPer1kSessions = "reports_per_1k_sessions"
        case firstSeen = "first_seen"
        case lastSeen = "last_seen"
        case firstRelease = "first_release"
        case isNew = "new"
        case previousRelease = "previous_release"
    }
}

/// An issue's figures in the previous release (zeros when it was not seen there).
struct PreviousRelease: Encodable, Equatable {
    var release: String
    var sessions: Int
    var affectedSessions: Int
    @NullWhenAbsent var affectedSessionRate: Double? = nil
    var reports: Int
    @NullWhenAbsent var reportsPer1kSessions: Double? = nil

    init(release: ReleaseStats, row: IssueRow?) {
        self.release = release.release.text
        sessions = release.sessions
        affectedSessions = row?.affectedSessions ?? 0
        reports = row?.reports ?? 0
        if sessions > 0 {
            affectedSessionRate = Double(min(affectedSessions, sessions)) / Double(sessions)
            reportsPer1kSessions = Double(reports) * 1000 / Double(sessions)
        }
    }

    enum CodingKeys: String, CodingKey {
        case release, sessions, reports
        case affectedSessions = "affected_sessions"
        case affectedSessionRate = "affected_session_rate"
        case reportsPer1kSessions = "reports_per_1k_sessions"
    }
}

struct IssuesView: Encodable {
    var app: String
    var release: String
    var id: String
    var sessions: Int
    var issues: [IssueView]
}
