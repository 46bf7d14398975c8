import WatchdogStore
import WatchdogWire

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
    /// `open`, `resolved`, `regressed` or `muted` (`IssueTriage`); `open` when nobody triaged it.
    var state = "open"
    /// What a person said about it, when someone did.
    @NullWhenAbsent var triage: TriageView? = nil

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
        case fingerprint, title, kind, screen, view, reports, regressed, trend, previous, state, triage
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

extension IssuesView: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("app", app)
            json.member("id", id)
            json.member("issues", issues)
            json.member("release", release)
            json.member("sessions", sessions)
        }
    }
}

extension IssueView: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("affected_session_rate", affectedSessionRate)
            json.member("affected_sessions", affectedSessions)
            json.member("fingerprint", fingerprint)
            json.member("first_release", firstRelease)
            json.member("first_seen", firstSeen)
            json.member("flooded_reports", floodedReports)
            json.member("keyboard_mode", keyboardMode)
            json.member("kind", kind)
            json.member("last_seen", lastSeen)
            json.member("new", isNew)
            json.member("previous", previous)
            json.member("previous_release", previousRelease)
            json.member("regressed", regressed)
            json.member("reports", reports)
            json.member("reports_per_1k_sessions", reportsPer1kSessions)
            json.member("screen", screen)
            json.member("state", state)
            json.member("suspect_reports", suspectReports)
            json.member("title", title)
            json.member("trend", trend)
            json.member("triage", triage)
            json.member("view", view)
        }
    }
}

extension PreviousRelease: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("affected_session_rate", affectedSessionRate)
            json.member("affected_sessions", affectedSessions)
            json.member("release", release)
            json.member("reports", reports)
            json.member("reports_per_1k_sessions", reportsPer1kSessions)
            json.member("sessions", sessions)
        }
    }
}
