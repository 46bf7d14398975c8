import WatchdogStore

/// What an app's alert rules find in its recently active releases, from the same roll-ups and the same
/// computations as the stats endpoints: the `regressed` verdict of `compare`, the `new` flag of
/// `issues`, the release's test crashes and its glitch-free session rate. Reads only.
struct AlertEvaluator: Sendable {
    let lookup: ReleaseLookup

    /// One rule's condition holding for one subject of one release.
    struct Finding: Sendable {
        var rule: AlertRuleRecord
        /// The release's id, or the release's id and the issue's fingerprint (`new_issue`).
        var subject: String
        var release: ReleaseStats
        var detail: Detail
    }

    /// What the condition found, for the alert's body and text.
    enum Detail: Sendable {
        case regressed(base: ReleaseStats, comparison: SessionComparison)
        case newIssue(IssueView)
        case testCrashes(Int)
        /// A resolved issue seen again in a later listed release.
        case issueRegressed(TriageView)
        /// `sessions`: those the rate rests on (the release's, or its attested installs').
        case glitchFree(rate: Double, upperBound: Double, threshold: Double, sessions: Int)
    }

    /// The findings of `rules` (all of one app) at `now`, and the releases they looked at.
    func evaluate(app: String, rules: [AlertRuleRecord], now: Int64) throws(APIError) -> (findings: [Finding], watched: Set<ReleaseID>) {
        let releases = try lookup.releases(of: app).sorted { ReleaseOrder.isOlder($0.release, $1.release) }
        let reach = try ReleaseReach.of(app: app, lookup: lookup)
        let watched = reach.watched(releases, now: now)
        var installs: [ReleaseID: Int] = [:]
        var attested = AttestedScope(lookup: lookup, app: app)
        /// Distinct installs that started sessions in a release (attested ones only for a
        /// rule with `installs: attested`), read once per pass.
        func installsOf(_ release: ReleaseStats, _ rule: AlertRuleRecord) throws(APIError) -> Int {
            if rule.attestedOnly { return try attested.cohort(release).installsWithSessions }
            if let known = installs[release.release] { return known }
            let count = try lookup.networkSide(release, of: app).installs
            installs[release.release] = count
            return count
        }
        func sessionsOf(_ release: ReleaseStats, _ rule: AlertRuleRecord) throws(APIError) -> Int {
            rule.attestedOnly ? try attested.cohort(release).sessions : release.sessions
        }
        var findings: [Finding] = []
        // Triage states, read once per pass when a rule needs them: muted issues fire nothing.
        let needsTriage = rules.contains { $0.condition == AlertCondition.newIssue.rawValue || $0.condition == AlertCondition.issueRegressed.rawValue }
        let triage = needsTriage ? try IssueTriage(lookup: lookup).states(app: app, releases: releases, now: now) : [:]
        for rule in rules where rule.condition == AlertCondition.issueRegressed.rawValue {
            for (fingerprint, state) in triage.sorted(by: { $0.key < $1.key }) where state.state == "regressed" {
                guard let release = state.regressedIn, let resolvedAt = state.record?.resolvedAt else { continue }
                // One per resolution: resolving it again makes a new subject.
                findings.append(Finding(rule: rule, subject: "\(fingerprint) resolved \(resolvedAt)", release: release,
                                        detail: .issueRegressed(TriageView(state, fingerprint: fingerprint))))
            }
        }
        for release in watched {
            // Computed once per release, whatever number of rules read them.
            var comparisons: [Bool: CompareView?] = [:]
            var issues: IssuesView?
            // The release's default base (`ReleaseReach.predecessor`), whether watched or not.
            let predecessor = reach.predecessor(of: release.release, in: releases)
            for rule in rules {
                // Rollout alerts are the rollout guard's (`RolloutService`), not a release's.
                guard let condition = AlertCondition(rawValue: rule.condition), !condition.isRollout else { continue }
                if condition != .testCrashes, rule.minimumInstalls > 0, try installsOf(release, rule) < rule.minimumInstalls { continue }
                switch condition {
                case .releaseRegressed:
                    guard let base = predecessor, try sessionsOf(base, rule) >= rule.minimumSessions, try sessionsOf(release, rule) >= rule.minimumSessions,
                          try installsOf(base, rule) >= rule.minimumInstalls else { continue }
                    if comparisons[rule.attestedOnly] == nil {
                        let filter: InstallFilter = rule.attestedOnly ? .attested(try attested.installs()) : .all
                        comparisons[rule.attestedOnly] = .some(try Self.compare(lookup, app: app, base: base, target: release, installs: filter))
                    }
                    guard let view = comparisons[rule.attestedOnly] ?? nil else { continue }
                    let verdict = rule.kind.map { kind in view.byKind.first { $0.value == kind }?.comparison } ?? view.overall
                    // Regressed by the interval, reliable or not: concentrated sessions say who
                    // sent them, and must not silence a regression (the text gives the reasons).
                    guard let verdict, verdict.intervalVerdict == "regressed" else { continue }
                    findings.append(Finding(rule: rule, subject: release.release.id, release: release, detail: .regressed(base: base, comparison: verdict)))
                case .newIssue:
                    if issues == nil {
                        issues = try IssueRoutes(lookup: lookup).issues(app: app, releases: releases, current: release, limit: 1000)
                    }
                    for issue in issues?.issues ?? [] where issue.isNew && issue.affectedSessions >= rule.minimumAffectedSessions
                        && triage[issue.fingerprint]?.state != "muted" {
                        findings.append(Finding(rule: rule, subject: "\(release.release.id) \(issue.fingerprint)", release: release, detail: .newIssue(issue)))
                    }
                case .testCrashes:
                    guard release.testCrashes > 0 else { continue }
                    findings.append(Finding(rule: rule, subject: release.release.id, release: release, detail: .testCrashes(release.testCrashes)))
                case .rolloutRolledBack, .rolloutCompleted, .rolloutPaused, .issueRegressed:
                    continue
                case .glitchFreeRateBelow:
                    let sessions = try sessionsOf(release, rule)
                    guard let threshold = rule.threshold, sessions > 0, sessions >= rule.minimumSessions else { continue }
                    let (rate, upper) = rule.attestedOnly
                        ? Self.glitchFree({ $0.side($0.networks(byNetwork: lookup.weighsByNetwork(app))) }(try attested.cohort(release)))
                        : (release.glitchFreeSessionRate ?? 1, try Self.glitchFreeUpperBound(lookup, app: app, release: release))
                    guard upper < threshold else { continue }
                    findings.append(Finding(rule: rule, subject: release.release.id, release: release,
                                            detail: .glitchFree(rate: rate, upperBound: upper, threshold: threshold, sessions: sessions)))
                }
            }
        }
        return (findings, Set(watched.map(\.release)))
    }

    /// The release against its predecessor as `GET …/compare?interval=sequential` computes it
    /// (an alert looks after every batch of new data: only the always-valid interval stays
    /// right under that many looks); `nil` when the two cannot be compared (data gone meanwhile).
    private static func compare(_ lookup: ReleaseLookup, app: String, base: ReleaseStats, target: ReleaseStats,
                                installs: InstallFilter) throws(APIError) -> CompareView? {
        do {
            return try CompareRoutes.comparison(lookup, app: app, base: base, target: target, method: .sequential, installs: installs)
        } catch where error.status == 404 {
            return nil
        }
    }

    /// The upper 95 % bound of the release's glitch-free session rate: one minus the Wilson
    /// lower bound of its affected-session rate by network (`NetworkWeighting`, as the verdicts
    /// read it), so neither one flooding session, nor one install with hundreds of sessions,
    /// nor a few networks posting glitching sessions can push it below a threshold.
    static func glitchFreeUpperBound(_ lookup: ReleaseLookup, app: String, release: ReleaseStats) throws(APIError) -> Double {
        let side = SessionComparison.Side(sessions: release.sessions, affectedSessions: release.affectedSessions, reports: 0, floodedReports: 0,
                                          weighted: try lookup.networkSide(release, of: app).overall)
        return glitchFree(side).upperBound
    }

    /// A side's glitch-free session rate and the upper 95 % bound of it, as above.
    static func glitchFree(_ side: SessionComparison.Side) -> (rate: Double, upperBound: Double) {
        let effective = side.effective
        let rate = side.sessions > 0 ? 1 - Double(min(side.affectedSessions, side.sessions)) / Double(side.sessions) : 1
        return (rate, 1 - SessionComparison.wilson(effective.x, effective.n).lower)
    }
}

/// The attested installs of an app as one pass of the evaluator reads them: the set once,
/// and each release's attested cohort (from its per-install roll-ups) once.
struct AttestedScope {
    let lookup: ReleaseLookup
    let app: String
    private var set: Set<String>?
    private var cohorts: [ReleaseID: Cohort] = [:]

    init(lookup: ReleaseLookup, app: String) {
        self.lookup = lookup
        self.app = app
    }

    mutating func installs() throws(APIError) -> Set<String> {
        if let set { return set }
        let store = lookup.store, app = self.app
        let read = try storeCall { try store.attestedInstalls(app: app) }
        set = read
        return read
    }

    mutating func cohort(_ release: ReleaseStats) throws(APIError) -> Cohort {
        if let known = cohorts[release.release] { return known }
        let attested = try installs()
        let store = lookup.store, app = self.app
        var cohort = Cohort()
        for install in try storeCall({ try store.installs(app: app, release: release.release) }).compactMap(InstallFilter.attested(attested).counted) {
            cohort.add(install)
        }
        cohorts[release.release] = cohort
        return cohort
    }
}

extension AlertRuleRecord {
    /// The rule reads the sessions of attested installs only (`installs: attested`).
    var attestedOnly: Bool { installs == "attested" }
}

extension Cohort {
    /// Members that started at least one session (as `NetworkSide.installs` counts them).
    var installsWithSessions: Int { members.count { $0.sessions > 0 } }
}
