import Foundation
import WatchdogStore
import WatchdogWire

/// The weekly digest of an app (README, "Alerts"): the releases first seen in the week — so
/// every figure of theirs is the week's, a delta and not an all-time total — each with its
/// glitch-free session rate and its verdict against its predecessor exactly as `compare`
/// gives them (`CompareRoutes.comparison` against `ReleaseReach.predecessor`, the gate's
/// base), its new and regressed issues (the Issues view's badges) and its test crashes.
struct WeeklyDigest: Sendable {
    let lookup: ReleaseLookup

    /// Releases listed in one digest, newest first (a bound on its size and its cost).
    static let releasesListed = 20
    /// Issues named per release.
    static let issuesListed = 10

    /// A span of time a digest covers: an ISO week (`2026-W48`, Monday 00:00 UTC to the next),
    /// or the 7 days before now (`watchdogd alerts digest --now`).
    struct Span: Sendable, Equatable {
        var label: String
        var start: Int64
        var end: Int64

        /// The ISO week before the one `now` falls in: the last complete week.
        static func lastCompleteWeek(now: Int64) -> Span {
            var calendar = Calendar(identifier: .iso8601)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let date = Date(timeIntervalSince1970: Double(now) / 1000)
            let thisWeek = calendar.dateInterval(of: .weekOfYear, for: date)!.start
            let start = calendar.date(byAdding: .day, value: -7, to: thisWeek)!
            let components = calendar.dateComponents([.yearForWeekOfYear, .weekOfYear], from: start)
            let label = String(format: "%04d-W%02d", components.yearForWeekOfYear ?? 0, components.weekOfYear ?? 0)
            return Span(label: label, start: Int64(start.timeIntervalSince1970 * 1000), end: Int64(thisWeek.timeIntervalSince1970 * 1000))
        }

        static func lastSevenDays(now: Int64) -> Span {
            Span(label: "last 7 days", start: now - 7 * 86_400_000, end: now)
        }
    }

    struct Issue: Encodable {
        var fingerprint: String
        var title: String
        /// `new` or `regressed`.
        var state: String
        var affectedSessions: Int

        enum CodingKeys: String, CodingKey {
            case fingerprint, title, state
            case affectedSessions = "affected_sessions"
        }
    }

    struct Release: Encodable {
        var release: String
        var releaseID: String
        var firstSeen: String
        var sessions: Int
        var glitchFreeSessionRate: Double?
        /// The predecessor compared against, and `compare`'s `overall` (absent without one).
        var base: String?
        var verdict: String?
        var comparison: SessionComparison?
        var newIssues: Int
        var regressedIssues: Int
        var testCrashes: Int
        var issues: [Issue]

        enum CodingKeys: String, CodingKey {
            case release, sessions, base, verdict, comparison, issues
            case releaseID = "release_id"
            case firstSeen = "first_seen"
            case glitchFreeSessionRate = "glitch_free_session_rate"
            case newIssues = "new_issues"
            case regressedIssues = "regressed_issues"
            case testCrashes = "test_crashes"
        }
    }

    struct Body: Encodable {
        var app: String
        var week: String
        var from: String
        var to: String
        var releases: [Release]
        /// Releases first seen in the span past `releasesListed`.
        var moreReleases: Int

        enum CodingKeys: String, CodingKey {
            case app, week, from, to, releases
            case moreReleases = "more_releases"
        }
    }

    /// What a digest delivery's body is: `text` for people (as an alert's), `digest` in fields.
    struct Payload: Encodable {
        var text: String
        var event = "digest"
        var digest: Body
    }

    func body(app: String, span: Span) throws(APIError) -> Body {
        let releases = try lookup.releases(of: app)
        let reach = try ReleaseReach.of(app: app, lookup: lookup)
        let ofTheWeek = ReleaseOrder.sorted(releases.filter { $0.sessions > 0 && $0.firstSeen >= span.start && $0.firstSeen < span.end },
                                            newestFirst: true, by: \.release)
        var listed: [Release] = []
        for stats in ofTheWeek.prefix(Self.releasesListed) {
            var release = Release(release: stats.release.text, releaseID: stats.release.id, firstSeen: Timestamp.format(milliseconds: stats.firstSeen),
                                  sessions: stats.sessions, glitchFreeSessionRate: stats.glitchFreeSessionRate, newIssues: 0, regressedIssues: 0,
                                  testCrashes: stats.testCrashes, issues: [])
            if let base = reach.predecessor(of: stats.release, in: releases) {
                let view = try CompareRoutes.comparison(lookup, app: app, base: base, target: stats)
                release.base = base.release.text
                release.comparison = view.overall
                release.verdict = view.overall.verdict
                release.glitchFreeSessionRate = view.target.glitchFreeSessionRate
            }
            let issues = try IssueRoutes(lookup: lookup).issues(app: app, releases: releases, current: stats, limit: 1000).issues
            let notable = issues.filter { $0.isNew || $0.regressed }
            release.newIssues = notable.filter(\.isNew).count
            release.regressedIssues = notable.filter(\.regressed).count
            release.issues = notable.sorted { ($0.affectedSessions, $1.fingerprint) > ($1.affectedSessions, $0.fingerprint) }.prefix(Self.issuesListed).map {
                Issue(fingerprint: $0.fingerprint, title: $0.title, state: $0.isNew ? "new" : "regressed", affectedSessions: $0.affectedSessions)
            }
            listed.append(release)
        }
        return Body(app: app, week: span.label, from: Timestamp.format(milliseconds: span.start), to: Timestamp.format(milliseconds: span.end),
                    releases: listed, moreReleases: max(0, ofTheWeek.count - Self.releasesListed))
    }

    /// The digest's delivery to `hook`: its id names the hook and span, so a retry or a
    /// receiver deduplicating on `Watchdog-Delivery` sees one digest per week.
    func delivery(app: String, span: Span, hook: AlertHookRecord, now: Int64, manual: Bool) throws(APIError) -> AlertDeliveryRecord {
        let body = try body(app: app, span: span)
        let payload = Payload(text: Self.text(body), digest: body)
        let json = (try? JSONBody.encode(payload)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        let id = manual ? UUID().uuidString.lowercased() : "digest-\(hook.id)-\(span.label)"
        return AlertDeliveryRecord(alertID: id, hookID: hook.id, app: app, ruleID: nil, event: "digest", body: json, createdAt: now, nextAttemptAt: now)
    }

    /// The sentences: Slack's formatting as an alert's `text` (client text in code spans,
    /// `&<>` escaped); the other kinds read it back as plain text (`HookFormats.plain`).
    static func text(_ body: Body) -> String {
        var lines = ["Watchdog weekly digest for \(body.app), \(body.week) (\(body.from) to \(body.to)): "
            + (body.releases.isEmpty ? "no new release." : "\(body.releases.count + body.moreReleases) new release\(body.releases.count + body.moreReleases == 1 ? "" : "s").")]
        for release in body.releases {
            let rate = release.glitchFreeSessionRate.map { String(format: "%.1f %%", $0 * 100) } ?? "no"
            var line = "• \(AlertMessage.code(release.release)): \(release.sessions) sessions, \(rate) glitch-free"
            if let base = release.base { line += ", \(release.verdict ?? "no verdict") against \(AlertMessage.code(base))" }
            line += "; \(release.newIssues) new and \(release.regressedIssues) regressed issues, \(release.testCrashes) test crashes."
            lines.append(line)
        }
        if body.moreReleases > 0 { lines.append("…and \(body.moreReleases) more.") }
        return AlertMessage.slackEscaped(lines.joined(separator: "\n"))
    }
}
