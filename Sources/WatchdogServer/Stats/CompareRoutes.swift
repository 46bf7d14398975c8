import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// `GET /v1/apps/{app}/compare`: two releases, or — with `rule=` — the installs of one
/// release that a config rule matched against those it did not, from the roll-ups only.
struct CompareRoutes: Sendable {
    let lookup: ReleaseLookup
    let config: ConfigService
    let attestation: AttestationService
    /// Compare names a rule's unfinished guarded rollout (`PartialRuleView.rollout`).
    let rollouts: RolloutService

    private var store: any TelemetryStore { lookup.store }

    func compare(app: String, request: HTTPRequest) throws(APIError) -> HTTPResponse {
        guard let targetText = request.query["target"] else {
            throw .badRequest("missing_parameter", "target is required: /compare?base=14.1.0 (31102)&target=14.2.0 (31245); a config rule's cohorts are /cohorts?release=&rule=")
        }
        let releases = try lookup.releases(of: app)
        let resolver = ReleaseResolver(releases: releases)
        let targetStats = try resolver.resolve(targetText, parameter: "target")
        // Without base=, the target's default base: the gate's and the alerts' (`ReleaseReach`).
        let baseStats: ReleaseStats
        if let baseText = request.query["base"] {
            baseStats = try resolver.resolve(baseText, parameter: "base")
        } else if let base = try ReleaseReach.of(app: app, lookup: lookup).predecessor(of: targetStats.release, in: releases) {
            baseStats = base
        } else {
            throw .notFound("\(targetStats.release.text.prefix(200)) has no default base (no earlier declared release, nor one of comparable reach, with sessions): name one with base=")
        }
        guard baseStats.release != targetStats.release else {
            throw .badRequest("same_release", "base and target are the same release (\(baseStats.release.text.prefix(200))); pick two different releases")
        }
        let limit = try BreakdownCut.limit(request.query["limit"])
        let method = try IntervalMethod.parse(request.query["interval"], default: .fixed)
        var view = try Self.comparison(lookup, app: app, base: baseStats, target: targetStats, method: method,
                                       installs: InstallFilter.of(request, app: app, attestation: attestation))
        view.cut(limit: limit)
        if let document = try storeCall({ try config.document(app: app) }) {
            var partial = PartialRuleView.of(document.rules, base: baseStats.release, target: targetStats.release)
            // The rollouts are read only when a rule splits a side.
            if !partial.isEmpty {
                let moving = try rollouts.rollouts(app: app)
                for index in partial.indices { partial[index].name(rolloutAmong: moving) }
            }
            view.partialRules = partial
        }
        return JSONBody.response(view)
    }

    /// Two releases compared, overall and per kind, screen, keyboard mode and idiom: what
    /// `compare` answers, and what the `release_regressed` alert reads. `installs`: `.attested`
    /// compares the attested installs only (`attestedComparison`).
    static func comparison(_ lookup: ReleaseLookup, app: String, base baseStats: ReleaseStats, target targetStats: ReleaseStats,
                           method: IntervalMethod = .fixed, installs: InstallFilter = .all) throws(APIError) -> CompareView {
        if case .attested = installs {
            return try attestedComparison(lookup, app: app, base: baseStats, target: targetStats, method: method, filter: installs)
        }
        let store = lookup.store
        let baseID = baseStats.release, targetID = targetStats.release
        guard var base = try storeCall({ try store.releaseDetail(app: app, release: baseID) }),
              var target = try storeCall({ try store.releaseDetail(app: app, release: targetID) }) else {
            throw .notFound("release data disappeared while reading; retry")
        }
        base.stats.concentration = try lookup.withConcentration(base.stats, of: app).concentration
        target.stats.concentration = try lookup.withConcentration(target.stats, of: app).concentration
        let baseNetworks = try lookup.networkSide(baseStats, of: app), targetNetworks = try lookup.networkSide(targetStats, of: app)
        let kinds = Set(base.stats.reportsByKind.keys).union(target.stats.reportsByKind.keys)
            .union(base.affectedSessions["kind", default: [:]].keys).union(target.affectedSessions["kind", default: [:]].keys).sorted()
        let byKind = kinds.map { kind in
            Breakdown(value: kind, comparison: SessionComparison(base: Self.side(base, kind: kind, networks: baseNetworks),
                                                                 target: Self.side(target, kind: kind, networks: targetNetworks), method: method))
        }
        let overall = SessionComparison(base: Self.side(base, networks: baseNetworks), target: Self.side(target, networks: targetNetworks), method: method)
        // Per-install counts are kept per kind only: the other breakdowns read their plain
        // counts at their side's overall design effect (by network), so one network cannot
        // make them look certain either; they are not weighted.
        let baseCounts = Self.counts(base), targetCounts = Self.counts(target)
        func breakdown(_ dimension: String, sessions: (ReleaseDetail, String) -> Int) -> [Breakdown] {
            let values = Set(Self.values(base, dimension)).union(Self.values(target, dimension))
            return values.sorted().map { value in
                Breakdown(value: value, comparison: SessionComparison(
                    base: Self.side(base, baseCounts, dimension, value, sessions: sessions(base, value), designEffect: overall.base.designEffect),
                    target: Self.side(target, targetCounts, dimension, value, sessions: sessions(target, value), designEffect: overall.target.designEffect),
                    method: method))
            }.sorted {
                ($0.comparison.base.affectedSessions + $0.comparison.target.affectedSessions, $1.value)
                    > ($1.comparison.base.affectedSessions + $1.comparison.target.affectedSessions, $0.value)
            }
        }
        var view = CompareView(
            app: app, intervalMethod: method, base: ReleaseSummary(base), target: ReleaseSummary(target),
            overall: overall, byKind: byKind,
            byScreen: breakdown("screen") { detail, _ in detail.stats.sessions },
            byKeyboardMode: breakdown("keyboard_mode") { detail, _ in detail.stats.sessions },
            // Per idiom, the denominator is the sessions started on that idiom.
            byIdiom: breakdown("idiom") { detail, idiom in detail.sessionsByIdiom[idiom] ?? 0 }
        )
        if base.stats.partialHistory || target.stats.partialHistory { view.withholdBreakdowns() }
        view.assessReliability(base: try storeCall { try store.sessionConcentration(app: app, release: baseID) },
                               target: try storeCall { try store.sessionConcentration(app: app, release: targetID) },
                               settings: lookup.admission.settings(app: app))
        return view
    }

    /// All kinds of a release, weighted by network.
    private static func side(_ detail: ReleaseDetail, networks: NetworkSide) -> SessionComparison.Side {
        SessionComparison.Side(sessions: detail.stats.sessions, affectedSessions: detail.stats.affectedSessions,
                               reports: detail.stats.reportsByKind.values.reduce(0, +), floodedReports: detail.stats.floodedReportsByKind.values.reduce(0, +),
                               weighted: networks.overall)
    }

    private static func side(_ detail: ReleaseDetail, kind: String, networks: NetworkSide) -> SessionComparison.Side {
        let affected = detail.affectedSessions["kind"]?[kind] ?? 0
        return SessionComparison.Side(sessions: detail.stats.sessions, affectedSessions: affected, reports: detail.stats.reportsByKind[kind] ?? 0,
                                      floodedReports: detail.stats.floodedReportsByKind[kind] ?? 0, weighted: networks.kind(kind, affected: affected))
    }

    private static func side(_ detail: ReleaseDetail, _ counts: [DimensionValue: (reports: Int, flooded: Int)], _ dimension: String, _ value: String,
                             sessions: Int, designEffect: Double) -> SessionComparison.Side {
        let count = counts[DimensionValue(dimension: dimension, value: value)] ?? (0, 0)
        return SessionComparison.Side(sessions: sessions, affectedSessions: detail.affectedSessions[dimension]?[value] ?? 0,
                                      reports: count.reports, floodedReports: count.flooded, designEffect: designEffect)
    }

    private struct DimensionValue: Hashable {
        var dimension: String
        var value: String
    }

    /// Headline and flooded reports per dimension value, summed over kinds in one pass (a
    /// scan per value was quadratic: 20,000 screens took seconds).
    private static func counts(_ detail: ReleaseDetail) -> [DimensionValue: (reports: Int, flooded: Int)] {
        var counts: [DimensionValue: (reports: Int, flooded: Int)] = [:]
        for row in detail.breakdown {
            counts[DimensionValue(dimension: row.dimension, value: row.value), default: (0, 0)].reports += row.reports
            counts[DimensionValue(dimension: row.dimension, value: row.value), default: (0, 0)].flooded += row.floodedReports
        }
        return counts
    }

    /// Values of a dimension with headline reports or affected sessions.
    private static func values(_ detail: ReleaseDetail, _ dimension: String) -> [String] {
        detail.breakdown.filter { $0.dimension == dimension && $0.reports > 0 }.map(\.value)
            + (detail.affectedSessions[dimension] ?? [:]).filter { $0.value > 0 }.map(\.key)
    }

    // MARK: Config cohorts

    /// `GET /v1/apps/{app}/rules`: the rules of the current config, for viewers to pick a
    /// cohort comparison (the whole document stays admin-only).
    func rules(app: String) throws(APIError) -> HTTPResponse {
        guard let document = try storeCall({ try config.document(app: app) }) else { throw .notFound("no app \(app)") }
        return JSONBody.response(RulesView(app: app, version: document.version, rules: document.rules.map(\.json)))
    }

    /// `GET /v1/apps/{app}/cohorts?release=R&rule=ID`: the installs of release R that rule ID matches (same salted
    /// hash of `install_id`, same channel and idiom conditions as `GET /v1/config`) against
    /// those it does not.
    func cohorts(app: String, request: HTTPRequest) throws(APIError) -> HTTPResponse {
        guard let releaseText = request.query["release"], let ruleID = request.query["rule"] else {
            throw .badRequest("missing_parameter", "a cohort comparison needs release and rule: /cohorts?release=14.2.0 (31245)&rule=RULE_ID")
        }
        let release = try ReleaseResolver(releases: try lookup.releases(of: app)).resolve(releaseText, parameter: "release")
        guard let document = try storeCall({ try config.document(app: app) }) else { throw .notFound("no app \(app)") }
        guard let rule = document.rules.first(where: { $0.id == ruleID }) else {
            let known = document.rules.map(\.id)
            throw .notFound("rule=\(ruleID.prefix(64)) is not in the app's current config; its rules are: \(known.isEmpty ? "none" : known.joined(separator: ", ").prefix(400))")
        }
        guard rule.applies(to: release.release) else {
            throw .badRequest("rule_not_for_release", "rule \(rule.id) does not apply to \(release.release.text.prefix(200)) (its versions or builds exclude it): no install of it was switched")
        }
        let method = try IntervalMethod.parse(request.query["interval"], default: .fixed)
        let filter = try InstallFilter.of(request, app: app, attestation: attestation)
        var view = try Self.cohorts(lookup, app: app, release: release, rule: rule, method: method, installs: filter)
        view.cut(limit: try BreakdownCut.limit(request.query["limit"]))
        return JSONBody.response(view)
    }

    /// The installs of `release` that `rule` matches against those it does not, as `cohorts`
    /// answers it (and the rollout guard reads it); the caller checked that the rule applies
    /// to the release. `installs`: `.attested` splits the attested installs only.
    static func cohorts(_ lookup: ReleaseLookup, app: String, release: ReleaseStats, rule: ConfigRule, method: IntervalMethod,
                        installs filter: InstallFilter = .all) throws(APIError) -> CompareView {
        let installs = try storeCall { try lookup.store.installs(app: app, release: release.release) }
        var matched = Cohort(), unmatched = Cohort()
        var eligible: [(matched: Bool, sessions: Int)] = []
        for install in installs.compactMap(filter.counted) {
            let client = ConfigClient(version: release.release.version, build: release.release.build, channel: install.channel,
                                      idiom: install.idiom, installID: install.installID)
            let isMatched = rule.matchesIgnoringVersion(client)
            if isMatched { matched.add(install) } else { unmatched.add(install) }
            if rule.eligibleIgnoringVersion(client) { eligible.append((isMatched, install.sessions)) }
        }
        let byNetwork = lookup.weighsByNetwork(app)
        let unmatchedNetworks = unmatched.networks(byNetwork: byNetwork), matchedNetworks = matched.networks(byNetwork: byNetwork)
        var view = CompareView(
            app: app, intervalMethod: method,
            base: ReleaseSummary(cohort: unmatched, release: release.release, label: "rule \(rule.id) not matched"),
            target: ReleaseSummary(cohort: matched, release: release.release, label: "rule \(rule.id) matched"),
            overall: SessionComparison(base: unmatched.side(unmatchedNetworks), target: matched.side(matchedNetworks), method: method),
            byKind: Cohort.byKind(base: unmatched, unmatchedNetworks, target: matched, matchedNetworks, method: method),
            byScreen: [], byKeyboardMode: [], byIdiom: [],
            cohort: CohortView(rule: rule, release: release.release, matched: matched.installs, unmatched: unmatched.installs,
                               sessionsWithoutInstall: max(0, release.sessions - matched.sessions - unmatched.sessions),
                               sampleRatio: SampleRatio(percent: rule.match.percent, eligible: eligible))
        )
        view.installs = filter.name
        if release.partialHistory {
            view.overall = view.overall.withheld(SessionComparison.partialHistoryReason)
            view.withholdBreakdowns()
        }
        // Each cohort is judged on its own sessions: an attacker's installs that dilute one
        // cohort are a share of that cohort, not of the release (issue 39).
        view.assessReliability(base: SessionConcentrationView(installs: unmatched.members), target: SessionConcentrationView(installs: matched.members),
                               settings: lookup.admission.settings(app: app))
        return view
    }
}

/// The installs of one side of a cohort comparison, summed.
struct Cohort {
    var installs = 0
    var sessions = 0
    var affectedSessions = 0
    /// Headline reports (under the flood cap), and flooded ones.
    var reports = 0
    var floodedReports = 0
    var kinds: [String: (reports: Int, affectedSessions: Int)] = [:]
    /// Active reports per install, flooded included: for the concentration figure.
    var reportsPerInstall: [Int] = []
    /// The installs themselves: the clusters of the design effect.
    var members: [InstallRow] = []

    mutating func add(_ install: InstallRow) {
        installs += 1
        sessions += install.sessions
        affectedSessions += min(install.affectedSessions, install.sessions)
        var installReports = 0
        for (kind, counts) in install.kinds {
            kinds[kind, default: (0, 0)].reports += counts.reports
            kinds[kind, default: (0, 0)].affectedSessions += min(counts.affectedSessions, install.sessions)
            installReports += counts.reports
        }
        reports += installReports
        floodedReports += max(0, install.reports - installReports)
        reportsPerInstall.append(install.reports)
        members.append(install)
    }

    /// Per kind of either side, `base` against `target`.
    static func byKind(base: Cohort, _ baseNetworks: NetworkSide, target: Cohort, _ targetNetworks: NetworkSide, method: IntervalMethod) -> [Breakdown] {
        Set(base.kinds.keys).union(target.kinds.keys).sorted().map {
            Breakdown(value: $0, comparison: SessionComparison(base: base.side(kind: $0, baseNetworks), target: target.side(kind: $0, targetNetworks), method: method))
        }
    }

    /// The cohort's installs as networks (`NetworkWeighting`), or by install.
    func networks(byNetwork: Bool) -> NetworkSide { NetworkSide(members, byNetwork: byNetwork) }

    func side(_ networks: NetworkSide) -> SessionComparison.Side {
        SessionComparison.Side(sessions: sessions, affectedSessions: affectedSessions, reports: reports, floodedReports: floodedReports,
                               weighted: networks.overall)
    }

    func side(kind: String, _ networks: NetworkSide) -> SessionComparison.Side {
        SessionComparison.Side(sessions: sessions, affectedSessions: kinds[kind]?.affectedSessions ?? 0, reports: kinds[kind]?.reports ?? 0, floodedReports: 0,
                               weighted: networks.kind(kind))
    }

    var concentration: InstallConcentration {
        let top = InstallConcentration.topInstalls(among: installs)
        return InstallConcentration(installs: installs, topInstalls: top, reports: reportsPerInstall.reduce(0, +),
                                    topInstallsReports: reportsPerInstall.sorted(by: >).prefix(top).reduce(0, +))
    }
}
