import WatchdogStore
import WatchdogWire

/// The JSON of `GET /v1/apps/{app}/compare`.
struct CompareView: Encodable {
    var app: String
    /// What the verdicts rest on: sessions with at least one glitch (see `SessionComparison`).
    var method = "affected_sessions"
    /// Which interval the verdicts read: `fixed` (one look) or `sequential` (always valid).
    var intervalMethod: IntervalMethod
    var base: ReleaseSummary
    var target: ReleaseSummary
    /// All kinds together.
    var overall: SessionComparison
    var byKind: [Breakdown]
    var byScreen: [Breakdown]
    var byKeyboardMode: [Breakdown]
    var byIdiom: [Breakdown]
    /// Set for a config-rule cohort comparison (`release=&rule=`).
    @NullWhenAbsent var cohort: CohortView? = nil
    /// `compare` only: the config rules that switch part of either release (`PartialRuleView`).
    @NullWhenAbsent var partialRules: [PartialRuleView]? = nil
    /// Who sent each side's session starts (a cohort's sides: its release's).
    var sessionConcentration: [String: SessionConcentrationView] = [:]
    /// Whether the verdicts can be acted on; when not, they read `unreliable`.
    var reliability = VerdictReliability(reasons: [])
    /// `all`, or `attested`: only installs with an attested App Attest key (`installs=attested`).
    var installs = "all"

    enum CodingKeys: String, CodingKey {
        case app, method, base, target, overall, cohort, reliability, installs
        case intervalMethod = "interval_method"
        case sessionConcentration = "session_concentration"
        case partialRules = "partial_rules"
        case byKind = "by_kind"
        case byScreen = "by_screen"
        case byKeyboardMode = "by_keyboard_mode"
        case byIdiom = "by_idiom"
    }
}

extension CompareView {
    /// Marks the view with the sessions' concentration; its verdicts become `unreliable` when
    /// the app's settings say the sessions are too concentrated to act on.
    mutating func assessReliability(base: SessionConcentration, target: SessionConcentration, settings: AdmissionSettings) {
        assessReliability(base: SessionConcentrationView(base), target: SessionConcentrationView(target), settings: settings)
    }

    /// The same, from concentrations already worked out (a side of picked installs).
    mutating func assessReliability(base baseView: SessionConcentrationView, target targetView: SessionConcentrationView, settings: AdmissionSettings) {
        sessionConcentration = ["base": baseView, "target": targetView]
        reliability = VerdictReliability.assess(base: baseView, target: targetView, settings: settings)
        overall = reliability.apply(overall)
        for keyPath in [\CompareView.byKind, \.byScreen, \.byKeyboardMode, \.byIdiom] {
            self[keyPath: keyPath] = self[keyPath: keyPath].map { Breakdown(value: $0.value, comparison: reliability.apply($0.comparison)) }
        }
    }

    /// Breakdowns of a release rebuilt from partly pruned raw rows: figures, no verdicts.
    mutating func withholdBreakdowns() {
        for keyPath in [\CompareView.byKind, \.byScreen, \.byKeyboardMode, \.byIdiom] {
            self[keyPath: keyPath] = self[keyPath: keyPath].map {
                Breakdown(value: $0.value, comparison: $0.comparison.withheld(SessionComparison.partialHistoryReason))
            }
        }
    }
}

/// One side of a comparison: a release, or a cohort of a release's installs.
struct ReleaseSummary: Encodable {
    var release: String
    var id: String
    var sessions: Int
    var reports: Int
    var suspectReports: Int
    var floodedReports: Int
    var affectedSessions: Int
    @NullWhenAbsent var glitchFreeSessionRate: Double? = nil
    var concentration: ConcentrationView

    init(_ detail: ReleaseDetail) {
        release = detail.stats.release.text
        id = detail.stats.release.id
        sessions = detail.stats.sessions
        reports = detail.stats.reportsByKind.values.reduce(0, +)
        suspectReports = detail.stats.suspectReportsByKind.values.reduce(0, +)
        floodedReports = detail.stats.floodedReportsByKind.values.reduce(0, +)
        affectedSessions = min(detail.stats.affectedSessions, detail.stats.sessions)
        glitchFreeSessionRate = detail.stats.glitchFreeSessionRate
        concentration = ConcentrationView(detail.stats.concentration)
    }

    init(cohort: Cohort, release: ReleaseID, label: String) {
        self.release = "\(release.text) — \(label)"
        id = release.id
        sessions = cohort.sessions
        reports = cohort.reports
        suspectReports = 0
        floodedReports = cohort.floodedReports
        affectedSessions = min(cohort.affectedSessions, cohort.sessions)
        glitchFreeSessionRate = cohort.sessions > 0 ? Double(cohort.sessions - affectedSessions) / Double(cohort.sessions) : nil
        concentration = ConcentrationView(cohort.concentration)
    }

    enum CodingKeys: String, CodingKey {
        case release, id, sessions, reports, concentration
        case suspectReports = "suspect_reports"
        case floodedReports = "flooded_reports"
        case affectedSessions = "affected_sessions"
        case glitchFreeSessionRate = "glitch_free_session_rate"
    }
}

/// How concentrated reports are: the top 1 % of installs (at least one) and their share.
struct ConcentrationView: Encodable {
    var installs: Int
    var topInstalls: Int
    /// Share of the active reports (flooded included, with an install id) that the top installs sent.
    @NullWhenAbsent var topInstallsReportShare: Double? = nil

    init(_ concentration: InstallConcentration) {
        installs = concentration.installs
        topInstalls = concentration.topInstalls
        if concentration.reports > 0 { topInstallsReportShare = Double(concentration.topInstallsReports) / Double(concentration.reports) }
    }

    enum CodingKeys: String, CodingKey {
        case installs
        case topInstalls = "top_installs"
        case topInstallsReportShare = "top_installs_report_share"
    }
}

extension ConcentrationView: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("installs", installs)
            json.member("top_installs", topInstalls)
            json.member("top_installs_report_share", topInstallsReportShare)
        }
    }
}

/// One value of a breakdown with its comparison, flattened: `{"value": ..., "base": ..., ...}`.
struct Breakdown: Encodable {
    var value: String
    var comparison: SessionComparison
    /// On the row summing the values past the cut (`BreakdownCut`): how many it sums.
    var otherValues: Int? = nil

    enum CodingKeys: String, CodingKey {
        case value
        case otherValues = "other_values"
    }

    func encode(to encoder: Encoder) throws {
        try comparison.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(value, forKey: .value)
        try container.encodeIfPresent(otherValues, forKey: .otherValues)
    }
}

/// The rule a cohort comparison splits a release by.
struct CohortView: Encodable, Equatable {
    var rule: String
    var name: String
    var percent: Double
    var set: JSONValue
    var release: String
    var installsMatched: Int
    var installsNotMatched: Int
    /// Session starts without an install id: in neither cohort.
    var sessionsWithoutInstall: Int
    /// The observed split against the rule's percent (`SampleRatio`).
    var sampleRatio: SampleRatio

    init(rule: ConfigRule, release: ReleaseID, matched: Int, unmatched: Int, sessionsWithoutInstall: Int, sampleRatio: SampleRatio) {
        self.rule = rule.id
        name = rule.name
        percent = rule.match.percent
        set = .object(rule.set)
        self.release = release.text
        installsMatched = matched
        installsNotMatched = unmatched
        self.sessionsWithoutInstall = sessionsWithoutInstall
        self.sampleRatio = sampleRatio
    }

    enum CodingKeys: String, CodingKey {
        case rule, name, percent, set, release
        case sampleRatio = "sample_ratio"
        case installsMatched = "installs_matched"
        case installsNotMatched = "installs_not_matched"
        case sessionsWithoutInstall = "sessions_without_install"
    }
}

/// `GET /v1/apps/{app}/rules`.
struct RulesView: Encodable {
    var app: String
    /// The config version the rules are from.
    var version: Int
    var rules: [JSONValue]
}
