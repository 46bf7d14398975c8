import WatchdogHTTP
import WatchdogStore

/// `GET /v1/apps/{app}/gate?release=R[&against=B]`: pass, fail or not yet for a release, from
/// the sequential comparison against `against` (default: `ReleaseReach.predecessor`, the
/// previous declared release, or the previous one of comparable reach). See `GateDecision`; `watchdogd gate` calls it and exits 0, 1 or 2.
struct GateRoutes: Sendable {
    let lookup: ReleaseLookup
    /// For `installs=attested`: the gate over the installs with an attested App Attest key only.
    let attestation: AttestationService

    func gate(app: String, request: HTTPRequest) throws(APIError) -> HTTPResponse {
        guard let releaseText = request.query["release"] else {
            throw .badRequest("missing_parameter", "release is required: /gate?release=14.2.0 (31245)[&against=14.1.0 (31102)]")
        }
        // An unknown release is "not yet"; one longer than any release ingest accepts is a mistake.
        guard !releaseText.isEmpty, releaseText.unicodeScalars.count <= 1100 else {
            throw .badRequest("invalid_parameter", "release must be 1 to 1100 characters: a release's id, its VERSION (BUILD) or VERSION")
        }
        var thresholds = GateDecision.Thresholds()
        if let value = try Self.whole(request.query["minimum_sessions"], "minimum_sessions") { thresholds.minimumSessions = value }
        if let value = try Self.whole(request.query["minimum_installs"], "minimum_installs") { thresholds.minimumInstalls = value }
        if let value = try Self.ratio(request.query["maximum_ratio"]) { thresholds.maximumRatio = value }
        let installFilter = try InstallFilter.of(request, app: app, attestation: attestation)
        let releases = try lookup.releases(of: app)
        let resolver = ReleaseResolver(releases: releases)
        // A base named by the job must exist (a typo is an error); the release may simply not have
        // reported yet (not yet), unless the name is ambiguous (an error too).
        let base: ReleaseStats? = try request.query["against"].map { text throws(APIError) in try resolver.resolve(text, parameter: "against") }
        let target: ReleaseStats
        do {
            target = try resolver.resolve(releaseText, parameter: "release")
        } catch where error.status == 404 {
            return JSONBody.response(GateView(app: app, release: releaseText, against: base?.release.text, thresholds: thresholds, view: nil, installs: (0, 0),
                                    missing: "no sessions of \(AlertMessage.code(String(releaseText.prefix(200)))) are counted yet (its name as listed by /releases; an undeclared release counts once admission lets it in)"))
        }
        let reach = try ReleaseReach.of(app: app, lookup: lookup)
        guard let against = base ?? reach.predecessor(of: target.release, in: releases) else {
            return JSONBody.response(GateView(app: app, release: target.release.text, against: nil, thresholds: thresholds, view: nil, installs: (0, 0),
                                    missing: "no earlier declared release, nor one of comparable reach, with sessions to compare against: name one with against="))
        }
        guard against.release != target.release else {
            throw .badRequest("same_release", "against names the release itself (\(target.release.text.prefix(200))); pick another release")
        }
        let view = try CompareRoutes.comparison(lookup, app: app, base: against, target: target, method: .sequential, installs: installFilter)
        // Attested: the installs counted are the attested ones each side's comparison summed.
        let installs = switch installFilter {
        case .all: (base: view.sessionConcentration["base"]?.installs ?? 0, target: view.sessionConcentration["target"]?.installs ?? 0)
        case .attested: (base: view.base.concentration.installs, target: view.target.concentration.installs)
        }
        return JSONBody.response(GateView(app: app, release: target.release.text, against: against.release.text, thresholds: thresholds, view: view, installs: installs))
    }

    private static func whole(_ text: String?, _ name: String) throws(APIError) -> Int? {
        guard let text else { return nil }
        guard let number = Int(text), (0...1_000_000_000).contains(number) else {
            throw .badRequest("invalid_parameter", "\(name) must be a whole number from 0 to 1000000000, got \(text.prefix(20))")
        }
        return number
    }

    private static func ratio(_ text: String?) throws(APIError) -> Double? {
        guard let text else { return nil }
        guard let ratio = Double(text), ratio.isFinite, ratio > 1, ratio <= 100 else {
            throw .badRequest("invalid_parameter", "maximum_ratio must be a number above 1 and at most 100 (e.g. 1.25: pass only once a 1.25× regression is ruled out), got \(text.prefix(20))")
        }
        return ratio
    }
}

/// The JSON of `GET /v1/apps/{app}/gate`.
struct GateView: Encodable {
    struct Side: Encodable {
        @NullWhenAbsent var release: String? = nil
        var sessions: Int
        var installs: Int
        var affectedSessions: Int

        enum CodingKeys: String, CodingKey {
            case release, sessions, installs
            case affectedSessions = "affected_sessions"
        }
    }

    var app: String
    var result: String
    var exitCode: Int32
    var reasons: [String]
    var intervalMethod = IntervalMethod.sequential
    @NullWhenAbsent var verdict: String? = nil
    @NullWhenAbsent var intervalVerdict: String? = nil
    @NullWhenAbsent var ratio: Double? = nil
    @NullWhenAbsent var interval: SessionComparison.Interval? = nil
    var base: Side
    var target: Side
    var minimumSessions: Int
    var minimumInstalls: Int
    var maximumRatio: Double
    var markdown: String

    init(app: String, release: String, against: String?, thresholds: GateDecision.Thresholds, view: CompareView?, installs: (base: Int, target: Int), missing: String? = nil) {
        let decision = GateDecision.decide(view, installs: installs, thresholds: thresholds, missing: missing)
        self.app = app
        result = decision.result.rawValue
        exitCode = decision.result.exitCode
        reasons = decision.reasons
        verdict = view?.overall.verdict
        intervalVerdict = view?.overall.intervalVerdict
        ratio = view?.overall.ratio
        interval = view?.overall.interval
        base = Side(release: against, sessions: view?.overall.base.sessions ?? 0, installs: installs.base, affectedSessions: view?.overall.base.affectedSessions ?? 0)
        target = Side(release: release, sessions: view?.overall.target.sessions ?? 0, installs: installs.target, affectedSessions: view?.overall.target.affectedSessions ?? 0)
        minimumSessions = thresholds.minimumSessions
        minimumInstalls = thresholds.minimumInstalls
        maximumRatio = thresholds.maximumRatio
        markdown = GateSummary.markdown(app: app, release: release, against: against, decision: decision, view: view, installs: installs)
    }

    enum CodingKeys: String, CodingKey {
        case app, result, reasons, verdict, ratio, interval, base, target, markdown
        case exitCode = "exit_code"
        case intervalVerdict = "interval_verdict"
        case intervalMethod = "interval_method"
        case minimumSessions = "minimum_sessions"
        case minimumInstalls = "minimum_installs"
        case maximumRatio = "maximum_ratio"
    }
}
