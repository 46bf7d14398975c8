import WatchdogStore
import WatchdogWire

/// One release as `GET /v1/apps/{app}/releases` shows it.
struct ReleaseStatsView: Encodable {
    var release: String
    /// Opaque, unambiguous release id: any per-release parameter takes it.
    var id: String
    var version: String
    var build: String
    var sessions: Int
    /// Headline counts: reports from the `active` app state.
    var reports: Int
    var reportsByKind: [String: Int]
    var affectedSessions: Int
    /// Share of sessions with an active report; `null` without sessions.
    @NullWhenAbsent var affectedSessionRate: Double? = nil
    /// Share of sessions without any (active) report; `null` without sessions.
    @NullWhenAbsent var glitchFreeSessionRate: Double? = nil
    @NullWhenAbsent var reportsPer1kSessions: Double? = nil
    @NullWhenAbsent var reportsPer1kSessionsByKind: [String: Double]? = nil
    /// Why the rates are `null`, when they are.
    @NullWhenAbsent var ratesUnavailableReason: String? = nil
    /// Reports sent while the app was `inactive`/`background`, kept out of the rates.
    var suspectReports: Int
    var suspectReportsByKind: [String: Int]
    /// Active reports past the per-session, per-fingerprint cap, kept out of the rates.
    var floodedReports: Int
    var floodedReportsByKind: [String: Int]
    var concentration: ConcentrationView
    var autoFixed: Int
    var testCrashes: Int
    var firstSeen: String
    var lastSeen: String
    /// Items clients dropped without sending them (`client_dropped`).
    var clientEvicted: Int
    var clientQuarantined: Int
    /// Session starts stored but held apart from every rate (`SessionMarks`: past the app's
    /// session limits, or far from when they arrived).
    var implausibleSessions: Int
    /// Reports whose session had no counted start: counted as reports, in no affected session.
    var unknownSessionReports: Int
    /// Of `sessions`, those of installs with an attested App Attest key; `null` while the app's
    /// attestation is `off` (docs/security.md, "Attested installs").
    @NullWhenAbsent var attestedSessions: Int? = nil

    enum CodingKeys: String, CodingKey {
        case release, id, version, build, sessions, reports, concentration
        case reportsByKind = "reports_by_kind"
        case affectedSessions = "affected_sessions"
        case affectedSessionRate = "affected_session_rate"
        case floodedReports = "flooded_reports"
        case floodedReportsByKind = "flooded_reports_by_kind"
        case glitchFreeSessionRate = "glitch_free_session_rate"
        case reportsPer1kSessions = "reports_per_1k_sessions"
        case reportsPer1kSessionsByKind = "reports_per_1k_sessions_by_kind"
        case ratesUnavailableReason = "rates_unavailable_reason"
        case suspectReports = "suspect_reports"
        case suspectReportsByKind = "suspect_reports_by_kind"
        case autoFixed = "auto_fixed"
        case testCrashes = "test_crashes"
        case firstSeen = "first_seen"
        case lastSeen = "last_seen"
        case clientEvicted = "client_evicted"
        case clientQuarantined = "client_quarantined"
        case implausibleSessions = "implausible_sessions"
        case unknownSessionReports = "unknown_session_reports"
        case attestedSessions = "attested_sessions"
    }

    init(_ stats: ReleaseStats) {
        release = stats.release.text
        id = stats.release.id
        version = stats.release.version
        build = stats.release.build
        sessions = stats.sessions
        reportsByKind = stats.reportsByKind
        reports = stats.reportsByKind.values.reduce(0, +)
        affectedSessions = stats.affectedSessions
        suspectReportsByKind = stats.suspectReportsByKind
        suspectReports = stats.suspectReportsByKind.values.reduce(0, +)
        floodedReportsByKind = stats.floodedReportsByKind
        floodedReports = stats.floodedReportsByKind.values.reduce(0, +)
        concentration = ConcentrationView(stats.concentration)
        autoFixed = stats.autoFixed
        testCrashes = stats.testCrashes
        firstSeen = Timestamp.format(milliseconds: stats.firstSeen)
        lastSeen = Timestamp.format(milliseconds: stats.lastSeen)
        clientEvicted = stats.clientEvicted
        clientQuarantined = stats.clientQuarantined
        implausibleSessions = stats.implausibleSessions
        unknownSessionReports = stats.unknownSessionReports
        if stats.sessions > 0 {
            let sessions = Double(stats.sessions)
            glitchFreeSessionRate = stats.glitchFreeSessionRate
            affectedSessionRate = Double(min(stats.affectedSessions, stats.sessions)) / sessions
            reportsPer1kSessions = Double(reports) * 1000 / sessions
            reportsPer1kSessionsByKind = stats.reportsByKind.mapValues { Double($0) * 1000 / sessions }
        } else {
            ratesUnavailableReason = "no session starts recorded for this release (POST /v1/sessions); rates need them as denominator"
        }
    }
}

extension ReleaseStatsView: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("affected_session_rate", affectedSessionRate)
            json.member("affected_sessions", affectedSessions)
            json.member("attested_sessions", attestedSessions)
            json.member("auto_fixed", autoFixed)
            json.member("build", build)
            json.member("client_evicted", clientEvicted)
            json.member("client_quarantined", clientQuarantined)
            json.member("concentration", concentration)
            json.member("first_seen", firstSeen)
            json.member("flooded_reports", floodedReports)
            json.member("flooded_reports_by_kind", floodedReportsByKind)
            json.member("glitch_free_session_rate", glitchFreeSessionRate)
            json.member("id", id)
            json.member("implausible_sessions", implausibleSessions)
            json.member("last_seen", lastSeen)
            json.member("rates_unavailable_reason", ratesUnavailableReason)
            json.member("release", release)
            json.member("reports", reports)
            json.member("reports_by_kind", reportsByKind)
            json.member("reports_per_1k_sessions", reportsPer1kSessions)
            json.member("reports_per_1k_sessions_by_kind", reportsPer1kSessionsByKind)
            json.member("sessions", sessions)
            json.member("suspect_reports", suspectReports)
            json.member("suspect_reports_by_kind", suspectReportsByKind)
            json.member("test_crashes", testCrashes)
            json.member("unknown_session_reports", unknownSessionReports)
            json.member("version", version)
        }
    }
}

/// `GET /v1/apps/{app}/releases`: one page of the listed releases, and the unlisted ones' totals.
struct ReleasesView: Encodable {
    var app: String
    /// Newest release first.
    var releases: [ReleaseStatsView]
    /// Listed releases in all, and where this page starts and its size.
    var total: Int
    var offset: Int
    var limit: Int
    var unlisted: UnlistedSummaryView
}

extension ReleasesView: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("app", app)
            json.member("limit", limit)
            json.member("offset", offset)
            json.member("releases", releases)
            json.member("total", total)
            json.member("unlisted", unlisted)
        }
    }
}

extension UnlistedSummaryView: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("count", count)
            json.member("implausible_sessions", implausibleSessions)
            json.member("reports", reports)
            json.member("sessions", sessions)
        }
    }
}

/// `GET /v1/apps`.
struct AppsView: Encodable {
    struct App: Encodable {
        var app: String
        var createdAt: String
        var releases: [String]

        enum CodingKeys: String, CodingKey {
            case app, releases
            case createdAt = "created_at"
        }
    }

    var apps: [App]
}

extension ReleaseStats {
    /// Sessions without any headline report, as a share; `nil` without sessions. Reports can
    /// name sessions whose start never arrived, so the rate is kept within 0…1.
    var glitchFreeSessionRate: Double? {
        sessions > 0 ? max(0, Double(sessions - affectedSessions)) / Double(sessions) : nil
    }
}
