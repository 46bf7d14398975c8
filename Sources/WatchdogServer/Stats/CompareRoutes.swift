import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// `GET /v1/apps/{app}/compare` and `GET /v1/apps/{app}/issues`: release against release,
/// with intervals, from the roll-ups only.
struct CompareRoutes: Sendable {
    let store: any TelemetryStore

    func releases(of app: String) throws(APIError) -> [ReleaseStats] {
        guard let releases = try storeCall({ try store.releases(app: app) }) else { throw .notFound("no app \(app)") }
        return releases
    }

    func compare(app: String, request: HTTPRequest) throws(APIError) -> HTTPResponse {
        guard let baseText = request.query["base"], let targetText = request.query["target"] else {
            throw .badRequest("missing_parameter", "base and target are required: /compare?base=14.1.0 (31102)&target=14.2.0 (31245)")
        }
        let resolver = ReleaseResolver(releases: try releases(of: app))
        let baseID = try resolver.resolve(baseText, parameter: "base").release
        let targetID = try resolver.resolve(targetText, parameter: "target").release
        guard let base = try storeCall({ try store.releaseDetail(app: app, release: baseID) }),
              let target = try storeCall({ try store.releaseDetail(app: app, release: targetID) }) else {
            throw .notFound("release data disappeared while reading; retry")
        }
        let overall = RateComparison(base: base.stats.reportsByKind.values.reduce(0, +), baseSessions: base.stats.sessions,
                                     target: target.stats.reportsByKind.values.reduce(0, +), targetSessions: target.stats.sessions)
        let kinds = Set(base.stats.reportsByKind.keys).union(target.stats.reportsByKind.keys).sorted()
        let byKind = kinds.map { kind in
            Breakdown(value: kind, comparison: RateComparison(base: base.stats.reportsByKind[kind] ?? 0, baseSessions: base.stats.sessions,
                                                              target: target.stats.reportsByKind[kind] ?? 0, targetSessions: target.stats.sessions))
        }
        func breakdown(_ dimension: String, sessions: (ReleaseDetail, String) -> Int) -> [Breakdown] {
            let baseCounts = Self.counts(base, dimension), targetCounts = Self.counts(target, dimension)
            return Set(baseCounts.keys).union(targetCounts.keys).sorted().map { value in
                Breakdown(value: value, comparison: RateComparison(base: baseCounts[value] ?? 0, baseSessions: sessions(base, value),
                                                                   target: targetCounts[value] ?? 0, targetSessions: sessions(target, value)))
            }.sorted { ($0.comparison.base.reports + $0.comparison.target.reports) > ($1.comparison.base.reports + $1.comparison.target.reports) }
        }
        let view = CompareView(
            app: app, base: ReleaseSummary(base), target: ReleaseSummary(target), overall: overall, byKind: byKind,
            byScreen: breakdown("screen") { detail, _ in detail.stats.sessions },
            byKeyboardMode: breakdown("keyboard_mode") { detail, _ in detail.stats.sessions },
            // Per idiom, the denominator is the sessions started on that idiom.
            byIdiom: breakdown("idiom") { detail, idiom in detail.sessionsByIdiom[idiom] ?? 0 }
        )
        return JSONBody.response(view)
    }

    /// Headline (active) reports per value of a dimension.
    private static func counts(_ detail: ReleaseDetail, _ dimension: String) -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in detail.breakdown where row.dimension == dimension && row.reports > 0 { counts[row.value, default: 0] += row.reports }
        return counts
    }

    func issues(app: String, request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let releases = try releases(of: app).sorted { ReleaseOrder.isOlder($0.release, $1.release) }
        guard !releases.isEmpty else { throw .notFound("app \(app) has no releases yet") }
        let current = try request.query["release"].map { text throws(APIError) in try ReleaseResolver(releases: releases).resolve(text, parameter: "release") }
            ?? releases[releases.count - 1]
        let limit = try Self.limit(request.query["limit"], default: 100, maximum: 1000)
        let rows = try storeCall { try store.issues(app: app, release: current.release) }
            .sorted { $0.reports != $1.reports ? $0.reports > $1.reports : $0.fingerprint < $1.fingerprint }
            .prefix(limit)
        let history = try storeCall { try store.issueHistory(app: app, fingerprints: rows.map(\.fingerprint)) }
        let byFingerprint = Dictionary(grouping: history, by: \.fingerprint)
        // Releases ranked once, oldest first, instead of comparing version strings per row.
        let rank = Dictionary(uniqueKeysWithValues: releases.enumerated().map { ($1.release, $0) })
        let index = releases.firstIndex { $0.release == current.release } ?? releases.count - 1
        let previous = releases[..<index].last { $0.sessions > 0 }
        let issues = rows.map { row -> IssueView in
            // Suspect-only rows (reports from inactive apps) do not make a fingerprint "seen".
            let seen = (byFingerprint[row.fingerprint] ?? [row]).filter { $0.reports > 0 || $0.release == row.release }
            let first = seen.min { (rank[$0.release] ?? .max) < (rank[$1.release] ?? .max) }?.release ?? row.release
            var trend: RateComparison?
            if let previous {
                let before = seen.first { $0.release == previous.release }?.reports ?? 0
                trend = RateComparison(base: before, baseSessions: previous.sessions, target: row.reports, targetSessions: current.sessions)
            }
            return IssueView(row: row, sessions: current.sessions, firstRelease: first, isNew: first == current.release,
                             previousRelease: previous?.release, trend: trend)
        }
        return JSONBody.response(IssuesView(app: app, release: ReleaseID.text(current.release), sessions: current.sessions, issues: issues))
    }

    static func limit(_ text: String?, default value: Int, maximum: Int) throws(APIError) -> Int {
        guard let text else { return value }
        guard let limit = Int(text), (1...maximum).contains(limit) else {
            throw .badRequest("invalid_parameter", "limit must be a whole number from 1 to \(maximum), got \(text.prefix(20))")
        }
        return limit
    }
}

extension ReleaseID {
    static func text(_ release: ReleaseID) -> String { "\(release.version) (\(release.build))" }
}

struct ReleaseSummary: Encodable {
    var release: String
    var sessions: Int
    var reports: Int
    var suspectReports: Int
    @NullWhenAbsent var glitchFreeSessionRate: Double? = nil

    init(_ detail: ReleaseDetail) {
        release = ReleaseID.text(detail.stats.release)
        sessions = detail.stats.sessions
        reports = detail.stats.reportsByKind.values.reduce(0, +)
        suspectReports = detail.stats.suspectReportsByKind.values.reduce(0, +)
        glitchFreeSessionRate = detail.stats.glitchFreeSessionRate
    }

    enum CodingKeys: String, CodingKey {
        case release, sessions, reports
        case suspectReports = "suspect_reports"
        case glitchFreeSessionRate = "glitch_free_session_rate"
    }
}

/// One value of a breakdown with its comparison, flattened: `{"value": ..., "base": ..., ...}`.
struct Breakdown: Encodable {
    var value: String
    var comparison: RateComparison

    enum CodingKeys: String, CodingKey { case value }

    func encode(to encoder: Encoder) throws {
        try comparison.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(value, forKey: .value)
    }
}

struct CompareView: Encodable {
    var app: String
    var base: ReleaseSummary
    var target: ReleaseSummary
    /// Headline reports (app `active`), all kinds.
    var overall: RateComparison
    var byKind: [Breakdown]
    var byScreen: [Breakdown]
    var byKeyboardMode: [Breakdown]
    var byIdiom: [Breakdown]

    enum CodingKeys: String, CodingKey {
        case app, base, target, overall
        case byKind = "by_kind"
        case byScreen = "by_screen"
        case byKeyboardMode = "by_keyboard_mode"
        case byIdiom = "by_idiom"
    }
}

struct IssueView: Encodable {
    var fingerprint: String
    var kind: String
    @NullWhenAbsent var screen: String? = nil
    @NullWhenAbsent var view: String? = nil
    @NullWhenAbsent var keyboardMode: String? = nil
    var reports: Int
    var suspectReports: Int
    var affectedSessions: Int
    @NullWhenAbsent var reportsPer1kSessions: Double? = nil
    var firstSeen: String
    var lastSeen: String
    var firstRelease: String
    var isNew: Bool
    var regressed: Bool
    @NullWhenAbsent var previousRelease: String? = nil
    /// This release against the previous one (with sessions), when there is one.
    @NullWhenAbsent var trend: RateComparison? = nil

    init(row: IssueRow, sessions: Int, firstRelease: ReleaseID, isNew: Bool, previousRelease: ReleaseID?, trend: RateComparison?) {
        fingerprint = row.fingerprint
        kind = row.kind
        screen = row.screen
        view = row.viewName
        keyboardMode = row.keyboardMode
        reports = row.reports
        suspectReports = row.suspectReports
        affectedSessions = row.affectedSessions
        reportsPer1kSessions = sessions > 0 ? Double(row.reports) * 1000 / Double(sessions) : nil
        firstSeen = Timestamp.format(milliseconds: row.firstSeen)
        lastSeen = Timestamp.format(milliseconds: row.lastSeen)
        self.firstRelease = ReleaseID.text(firstRelease)
        self.isNew = isNew
        regressed = trend?.verdict == "regressed"
        self.previousRelease = previousRelease.map(ReleaseID.text)
        self.trend = trend
    }

    enum CodingKeys: String, CodingKey {
        case fingerprint, kind, screen, view, reports, regressed, trend
        case keyboardMode = "keyboard_mode"
        case suspectReports = "suspect_reports"
        case affectedSessions = "affected_sessions"
        case reportsPer1kSessions = "reports_per_1k_sessions"
        case firstSeen = "first_seen"
        case lastSeen = "last_seen"
        case firstRelease = "first_release"
        case isNew = "new"
        case previousRelease = "previous_release"
    }
}

struct IssuesView: Encodable {
    var app: String
    var release: String
    var sessions: Int
    var issues: [IssueView]
}
