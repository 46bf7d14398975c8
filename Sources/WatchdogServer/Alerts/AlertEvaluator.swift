import WatchdogStore

/// What an app's alert rules find in its newest releases, from the same roll-ups and the same
/// computations as the stats endpoints: the `regressed` verdict of `compare`, the `new` flag of
/// `issues`, the release's test crashes and its glitch-free session rate. Reads only.
struct AlertEvaluator: Sendable {
    let lookup: ReleaseLookup

    /// The newest releases (semantic version, then build) whose conditions are evaluated and
    /// cleared; an older release's firing stays as it is.
    static let releasesWatched = 5

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
        case glitchFree(rate: Double, upperBound: Double, threshold: Double)
    }

    /// The findings of `rules` (all of one app), and the releases they looked at.
    func evaluate(app: String, rules: [AlertRuleRecord]) throws(APIError) -> (findings: [Finding], watched: Set<ReleaseID>) {
        let releases = try lookup.releases(of: app).sorted { ReleaseOrder.isOlder($0.release, $1.release) }
        let firstWatched = max(0, releases.count - Self.releasesWatched)
        var findings: [Finding] = []
        for index in firstWatched..<releases.count {
            let release = releases[index]
            // Computed once per release, whatever number of rules read them.
            var comparison: CompareView??
            var issues: IssuesView?
            let predecessor = releases[..<index].last { $0.sessions > 0 }
            for rule in rules {
                guard let condition = AlertCondition(rawValue: rule.condition) else { continue }
                switch condition {
                case .releaseRegressed:
                    guard let base = predecessor, base.sessions >= rule.minimumSessions, release.sessions >= rule.minimumSessions else { continue }
                    if comparison == nil { comparison = .some(try Self.compare(lookup, app: app, base: base, target: release)) }
                    guard let view = comparison ?? nil else { continue }
                    let verdict = rule.kind.map { kind in view.byKind.first { $0.value == kind }?.comparison } ?? view.overall
                    guard let verdict, verdict.verdict == "regressed" else { continue }
                    findings.append(Finding(rule: rule, subject: release.release.id, release: release, detail: .regressed(base: base, comparison: verdict)))
                case .newIssue:
                    if issues == nil {
                        issues = try IssueRoutes(lookup: lookup).issues(app: app, releases: releases, current: release, limit: 1000)
                    }
                    for issue in issues?.issues ?? [] where issue.isNew && issue.affectedSessions >= rule.minimumAffectedSessions {
                        findings.append(Finding(rule: rule, subject: "\(release.release.id) \(issue.fingerprint)", release: release, detail: .newIssue(issue)))
                    }
                case .testCrashes:
                    guard release.testCrashes > 0 else { continue }
                    findings.append(Finding(rule: rule, subject: release.release.id, release: release, detail: .testCrashes(release.testCrashes)))
                case .glitchFreeRateBelow:
                    guard let threshold = rule.threshold, release.sessions > 0, release.sessions >= rule.minimumSessions,
                          let rate = release.glitchFreeSessionRate else { continue }
                    let upper = try Self.glitchFreeUpperBound(lookup, app: app, release: release)
                    guard upper < threshold else { continue }
                    findings.append(Finding(rule: rule, subject: release.release.id, release: release,
                                            detail: .glitchFree(rate: rate, upperBound: upper, threshold: threshold)))
                }
            }
        }
        return (findings, Set(releases[firstWatched...].map(\.release)))
    }

    /// The release against its predecessor as `GET …/compare` computes it; `nil` when the two
    /// cannot be compared (data gone meanwhile).
    private static func compare(_ lookup: ReleaseLookup, app: String, base: ReleaseStats, target: ReleaseStats) throws(APIError) -> CompareView? {
        do {
            return try CompareRoutes.comparison(lookup, app: app, base: base, target: target)
        } catch where error.status == 404 {
            return nil
        }
    }

    /// The upper 95 % bound of the release's glitch-free session rate: one minus the Wilson
    /// lower bound of its affected-session rate at the effective sample size (sessions divided
    /// by the design effect of clustering by install, as the verdicts use), so neither one
    /// flooding session nor one install with hundreds of sessions can push it below a threshold.
    static func glitchFreeUpperBound(_ lookup: ReleaseLookup, app: String, release: ReleaseStats) throws(APIError) -> Double {
        let designEffect = try lookup.designEffect(release, of: app)
        let side = SessionComparison.Side(sessions: release.sessions, affectedSessions: release.affectedSessions, reports: 0, floodedReports: 0,
                                          designEffect: designEffect)
        let effective = side.effective
        return 1 - SessionComparison.wilson(effective.x, effective.n).lower
    }
}
