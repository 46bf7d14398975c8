import Foundation
import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// `GET /v1/apps/{app}/issues`: a release's reports grouped by fingerprint, each against the
/// previous release (with sessions) by the same affected-session comparison as `compare`.
struct IssueRoutes: Sendable {
    let lookup: ReleaseLookup
    /// Now, for the triage states (a mute that ended).
    var clock: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }

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
        let wanted = request.query["state"]
        if let wanted, !Self.states.contains(wanted) {
            throw .badRequest("invalid_parameter", "state must be one of \(Self.states.sorted().joined(separator: ", ")), got \"\(wanted.prefix(40))\"")
        }
        // Triage states are read for the whole list, then the list is cut: a state filter
        // finds its issues among the 1,000 with the most affected sessions.
        var view = try issues(app: app, releases: releases, current: current, limit: wanted == nil ? limit : 1000)
        let states = try IssueTriage(lookup: lookup).states(app: app, releases: releases, now: clock())
        for index in view.issues.indices {
            guard let state = states[view.issues[index].fingerprint] else { continue }
            view.issues[index].state = state.state
            view.issues[index].triage = TriageView(state, fingerprint: view.issues[index].fingerprint)
        }
        if let wanted { view.issues = Array(view.issues.filter { $0.state == wanted }.prefix(limit)) }
        return JSONBody.response(writing: view)
    }

    /// What `state=` may ask for.
    static let states: Set<String> = ["open", "resolved", "regressed", "muted"]

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
                                                   reports: row.reports, floodedReports: row.floodedReports, designEffect: currentEffect),
                    // The always-valid interval, as Compare, alerts and the gate read: the list is
                    // looked at again and again, and one interval on every view (issue 44).
                    method: .sequential)
            }
            if current.partialHistory || previous?.partialHistory == true { trend = trend?.withheld(SessionComparison.partialHistoryReason) }
            let regressed = !isNew && trend?.verdict == "regressed" && row.affectedSessions >= Self.minimumAffectedSessionsForRegressed
            return IssueView(row: row, sessions: current.sessions, firstRelease: first, isNew: isNew, regressed: regressed,
                             previous: previous.map { PreviousRelease(release: $0, row: before) }, trend: trend)
        }
        return IssuesView(app: app, release: current.release.text, id: current.release.id, sessions: current.sessions, issues: issues)
    }
}
