import Foundation
import Testing
@testable import WatchdogServer
@testable import WatchdogStore
import WatchdogTesting

/// Every text a client can choose (release versions and builds, kinds, screens, view names)
/// reaches a person only as a code span: through every alert template, every rollout note and
/// reason, and the gate's summary (issue 39, point 6). Each template is fed the same hostile
/// names; outside the spans nothing of them is left.
@Suite struct ClientTextSpanTests {
    /// A link, mentions, formatting, a backtick that would close the span, a line break.
    static let hostile = "9.9 [fix](https://evil.example/fix) <!here> @channel *now* `x` \n_y_"
    static let markers = ["evil.example", "https", "[fix]", "!here", "@channel", "*now*", "_y_", "<", ">"]

    /// Checks that `text` has its spans closed and none of the markers outside them.
    static func expectSpans(_ text: String, _ template: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let pieces = text.split(separator: "`", omittingEmptySubsequences: false).map(String.init)
        #expect(pieces.count % 2 == 1, "\(template): a span left open: \(text)", sourceLocation: sourceLocation)
        let outside = pieces.enumerated().filter { $0.offset % 2 == 0 }.map(\.element).joined(separator: " ")
        for marker in markers where outside.contains(marker) {
            Issue.record("\(template): \(marker) outside a code span: \(text)", sourceLocation: sourceLocation)
        }
        #expect(text.contains("evil.example"), "\(template): the name is shown, in a span: \(text)", sourceLocation: sourceLocation)
    }

    static let hook = AlertHookRecord(id: "wh1", app: "app", name: "team", url: "https://hooks.example/x", secret: "s", createdAt: 0, createdBy: "admin")

    static func rule(_ condition: AlertCondition, kind: String? = nil) -> AlertRuleRecord {
        AlertRuleRecord(id: "ar1", app: "app", name: "rule", condition: condition.rawValue, kind: kind, minimumSessions: 0, minimumAffectedSessions: 1,
                        threshold: condition == .glitchFreeRateBelow ? 0.99 : nil, hookID: hook.id, createdAt: 0, createdBy: "admin")
    }

    static func release(_ version: String) -> ReleaseStats {
        var stats = ReleaseStats(release: ReleaseID(version: version, build: hostile), sessions: 500, reportsByKind: [:], suspectReportsByKind: [:],
                                 affectedSessions: 100, autoFixed: 0, testCrashes: 3, firstSeen: 0, lastSeen: 0)
        stats.reportsByKind = ["x-" + hostile: 10]
        return stats
    }

    static func text(_ alert: NewAlert) throws -> String {
        let json = try #require(try JSONSerialization.jsonObject(with: Data(alert.delivery.body.utf8)) as? [String: Any])
        return try #require(json["text"] as? String)
    }

    @Test func everyReleaseAlertTemplateQuotesClientTextAsCode() throws {
        let target = Self.release("2.0 " + Self.hostile), base = Self.release("1.0 " + Self.hostile)
        let side = SessionComparison.Side(sessions: 500, affectedSessions: 100, reports: 10, floodedReports: 0)
        var comparison = SessionComparison(base: SessionComparison.Side(sessions: 500, affectedSessions: 20, reports: 2, floodedReports: 0), target: side,
                                           method: .sequential)
        comparison = VerdictReliability(reasons: [.init(code: "one_burst", side: "target", message: "90 % of the target's sessions started in one hour")])
            .apply(comparison)
        #expect(comparison.verdict == "unreliable" && comparison.intervalVerdict == "regressed")
        let row = IssueRow(fingerprint: "fp_1", release: target.release, kind: "x-" + Self.hostile, screen: Self.hostile, viewName: Self.hostile,
                           keyboardMode: nil, reports: 5, suspectReports: 0, affectedSessions: 5, firstSeen: 0, lastSeen: 0)
        let issue = IssueView(row: row, sessions: 500, firstRelease: target.release, isNew: true, regressed: false, previous: nil, trend: nil)
        let findings: [(String, AlertEvaluator.Finding)] = [
            ("release_regressed", .init(rule: Self.rule(.releaseRegressed), subject: "s1", release: target, detail: .regressed(base: base, comparison: comparison))),
            ("release_regressed per kind", .init(rule: Self.rule(.releaseRegressed, kind: "x-" + Self.hostile), subject: "s2", release: target,
                                                 detail: .regressed(base: base, comparison: comparison))),
            ("new_issue", .init(rule: Self.rule(.newIssue), subject: "s3", release: target, detail: .newIssue(issue))),
            ("test_crashes", .init(rule: Self.rule(.testCrashes), subject: "s4", release: target, detail: .testCrashes(3))),
            ("glitch_free_rate_below", .init(rule: Self.rule(.glitchFreeRateBelow), subject: "s5", release: target,
                                             detail: .glitchFree(rate: 0.8, upperBound: 0.85, threshold: 0.99, sessions: 500))),
        ]
        for (template, finding) in findings {
            let alerts = AlertMessage.alerts([finding], hooks: [Self.hook.id: Self.hook], app: "app", now: 0)
            Self.expectSpans(try Self.text(try #require(alerts.first)), template)
        }
    }

    @Test func everyRolloutTemplateQuotesClientTextAsCode() throws {
        let name = "14.2.0 (" + Self.hostile + ")"
        func evidence(_ verdict: String, interval: String) -> [RolloutEvidence] {
            [RolloutEvidence(release: name, matched: .init(installs: 50, sessions: 400, affectedSessions: 90, stepSessions: 400),
                             unmatched: .init(installs: 50, sessions: 400, affectedSessions: 30, stepSessions: 400),
                             verdicts: [.init(scope: "overall", verdict: verdict, intervalVerdict: interval, ratio: 3, lower: 1.5, upper: 5, reason: nil),
                                        .init(scope: "x-" + Self.hostile, verdict: verdict, intervalVerdict: interval, ratio: 3, lower: 1.5, upper: 5, reason: nil)],
                             reliable: verdict != "unreliable", reasons: verdict == "unreliable" ? ["90 % of the target's sessions started in one hour"] : [])]
        }
        let plan = RolloutPlan(steps: [10, 50, 100], minimumSessions: 100, minimumHours: 6, guard: RolloutGuard(overall: true, kinds: ["x-" + Self.hostile]))
        var rollout = RolloutMachine.start(app: "app", rule: "fix", plan: plan, fromPercent: 0, actor: "admin", now: 0)
        RolloutMachine.finish(&rollout, configVersion: 2, baseline: [:])
        let later: Int64 = 7 * 3_600_000

        // Rolled back: the reason, the note and the alert.
        let back = RolloutMachine.decide(rollout, evidence: evidence("regressed", interval: "regressed"), now: later)
        #expect(back.name == "roll_back", "\(back)")
        Self.expectSpans(back.reason, "rollback reason")
        var rolledBack = rollout
        rolledBack.pending = RolloutMachine.event(for: back, rollout, evidence: evidence("regressed", interval: "regressed"), now: later)
        Self.expectSpans(RolloutMachine.note(rolledBack, try #require(rolledBack.pending)), "rollback note")
        RolloutMachine.finish(&rolledBack, configVersion: 3, baseline: [:])
        Self.expectSpans(try Self.text(AlertMessage.rollout(rolledBack, view: nil, rule: Self.rule(.rolloutRolledBack), hook: Self.hook, now: later)),
                         "rollout_rolled_back")

        // Paused by the guard on unreliable evidence: the reason and the alert.
        let pause = RolloutMachine.decide(rollout, evidence: evidence("unreliable", interval: "no_change"), now: later)
        #expect(pause.name == "pause", "\(pause)")
        var paused = rollout
        RolloutMachine.pause(&paused, reason: pause.reason, evidence: evidence("unreliable", interval: "no_change"), now: later)
        Self.expectSpans(try Self.text(AlertMessage.rollout(paused, view: nil, rule: Self.rule(.rolloutPaused), hook: Self.hook, now: later)), "rollout_paused")

        // Advanced: the note names the release.
        let advance = RolloutMachine.decide(rollout, evidence: evidence("no_change", interval: "no_change"), now: later)
        var advanced = rollout
        advanced.pending = RolloutMachine.event(for: advance, rollout, evidence: evidence("no_change", interval: "no_change"), now: later)
        Self.expectSpans(RolloutMachine.note(advanced, try #require(advanced.pending)), "advance note")

        // Waiting on a withheld verdict: the reason names the release.
        let wait = RolloutMachine.decide(rollout, evidence: evidence("no_change", interval: "no_change").map {
            var copy = $0
            copy.verdicts[0].verdict = nil
            return copy
        }, now: later)
        Self.expectSpans(wait.reason, "withheld reason")
    }

    @Test func aLongNoteOrAlertCutThroughASpanClosesIt() {
        let text = "in " + AlertMessage.code(String(repeating: "https://evil.example/", count: 20)) + " and more"
        let cut = AlertMessage.cut(text, to: 60)
        #expect(cut.count <= 60 && cut.hasSuffix("`…"), "\(cut)")
        #expect(cut.filter { $0 == "`" }.count % 2 == 0, "\(cut)")
    }

    @Test func theGateSummaryQuotesClientTextAsCode() throws {
        let decision = GateDecision(result: .notYet, reasons: ["nothing to compare yet"])
        let summary = GateSummary.markdown(app: "app", release: "2.0 " + Self.hostile, against: "1.0 " + Self.hostile, decision: decision, view: nil,
                                           installs: (0, 0))
        Self.expectSpans(summary, "gate summary")
        // A release the gate has no sessions of: its name is quoted in the reason too.
        let app = try TestApplication()
        defer { try? app.stop() }
        _ = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let query = Self.hostile.addingPercentEncoding(withAllowedCharacters: CharacterSet.alphanumerics) ?? ""
        let answer = try app.client.request("GET", "/v1/apps/com.example.mail/gate?release=\(query)", token: viewer)
        #expect(answer.status == 200, "\(answer.text)")
        Self.expectSpans(try #require(answer.json["markdown"] as? String), "gate summary of an unknown release")
    }
}
