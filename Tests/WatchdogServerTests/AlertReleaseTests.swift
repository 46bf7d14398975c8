import Foundation
import Testing
@testable import WatchdogServer
import WatchdogStore
import WatchdogTesting

/// Issue 23, point 4: rules watch the releases that had sessions recently, whatever their
/// version numbers; a rule needs distinct installs as well as sessions; what a client sent is
/// quoted in the Slack sentence. In memory over a real store, a real loopback receiver.
@Suite struct AlertReleaseTests {
    static let alerts = AlertTests.alerts

    /// `sessions` sessions of a release spread over `installs` installs, the first `affected`
    /// sessions with a report of `kind` on `screen`.
    static func release(_ app: TestApplication, key: String, version: String, sessions: Int, installs: Int, affected: Int,
                        kind: String = "view_frame_mismatch", screen: String? = nil) throws {
        var starts: [[String: Any]] = [], reports: [[String: Any]] = []
        for index in 0..<sessions {
            var session = Fixtures.session(version: version, build: "1")
            session["install_id"] = "I-\(version)-\(index % installs)"
            starts.append(session)
            if index < affected {
                var report = try Fixtures.freshReport(version: version, build: "1", kind: kind, sessionID: session["id"] as? String)
                report["install_id"] = session["install_id"]
                if let screen { report["screen"] = screen }
                reports.append(report)
            }
        }
        for start in stride(from: 0, to: starts.count, by: 500) {
            #expect(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": Array(starts[start..<min(start + 500, starts.count)])]).status == 202)
        }
        if !reports.isEmpty { try VerdictTests.post(app, key: key, reports) }
    }

    @Test func fiveJunkReleasesWithHigherVersionsDoNotSilenceTheRealRegression() throws {
        let receiver = try WebhookReceiver()
        let setup = try AlertTests.setUp(receiver, rules: [["condition": "release_regressed", "minimum_sessions": 100]])
        try Self.release(setup.app, key: setup.key, version: "14.1.0", sessions: 400, installs: 400, affected: 20)
        try Self.release(setup.app, key: setup.key, version: "14.2.0", sessions: 400, installs: 400, affected: 80)
        // One request: a few session starts for each of five versions above every real one.
        let junk = (0..<5).flatMap { index in
            (0..<3).map { _ in
                var session = Fixtures.session(version: "9999.0.\(index)", build: "1")
                session["install_id"] = "attacker"
                return session
            }
        }
        #expect(try setup.app.client.postJSON("/v1/sessions", token: setup.key, json: ["sessions": junk]).status == 202)
        #expect(try AlertTests.pass(setup.app) == (1, 1))
        let alert = try #require(receiver.received.first?.json["alert"] as? [String: Any])
        #expect(alert["release"] as? String == "14.2.0 (1)" && alert["base"] as? String == "14.1.0 (1)", "\(alert)")
    }

    @Test func watchedReleasesAreTheRecentOnesWithTheMostSessionsWhateverTheirVersions() {
        let day: Int64 = 86_400_000, now: Int64 = 1_764_000_000_000
        func release(_ version: String, sessions: Int, lastSeen: Int64) -> ReleaseStats {
            var stats = ReleaseStats.sample(version: version, build: "1", sessions: sessions)
            stats.lastSeen = lastSeen
            return stats
        }
        let real = [release("14.1.0", sessions: 5000, lastSeen: now - 2 * day), release("14.2.0", sessions: 3000, lastSeen: now)]
        let quiet = release("13.0.0", sessions: 90_000, lastSeen: now - 8 * day)
        let junk = (0..<30).map { release("9999.0.\($0)", sessions: 3, lastSeen: now) }
        let reach = ReleaseReach(networks: [:], declared: [], share: 0.25)
        let watched = reach.watched(real + [quiet] + junk, now: now)
        #expect(watched.count == ReleaseReach.releasesWatched)
        #expect(watched.prefix(2).map(\.release.version) == ["14.1.0", "14.2.0"], "in version order, the real ones kept")
        #expect(!watched.contains { $0.release.version == "13.0.0" }, "a week without sessions")
        // An app gone quiet keeps its last week watched: counted from its newest data.
        let later = reach.watched(real + [quiet], now: now + 60 * day)
        #expect(later.map(\.release.version) == ["14.1.0", "14.2.0"])
    }

    /// Issue 39, point 2: sessions concentrated in one network (here every one: the test posts
    /// from one address) make the verdict `unreliable`, which must not silence a regression:
    /// the alert fires, saying why it is unreliable.
    @Test func anUnreliableRegressionStillAlertsWithItsReasons() throws {
        let receiver = try WebhookReceiver()
        var admission = AdmissionSettings.open
        admission.maximumNetworkShare = 0.5
        let setup = try AlertTests.setUp(receiver, rules: [["condition": "release_regressed", "minimum_sessions": 100]], admission: admission)
        try AlertTests.release(setup.app, key: setup.key, version: "14.1.0", sessions: 400, affected: 20)
        try AlertTests.release(setup.app, key: setup.key, version: "14.2.0", sessions: 400, affected: 80)
        #expect(try AlertTests.pass(setup.app) == (1, 1))
        let json = try #require(receiver.received.first?.json)
        let comparison = (json["alert"] as? [String: Any])?["comparison"] as? [String: Any]
        #expect(comparison?["verdict"] as? String == "unreliable" && comparison?["interval_verdict"] as? String == "regressed", "\(comparison ?? [:])")
        let text = json["text"] as? String ?? ""
        #expect(text.contains("regressed against") && text.contains("Unreliable:") && text.contains("from one network"), "\(text)")
    }

    @Test func aRuleNeedsItsMinimumOfDistinctInstalls() throws {
        let receiver = try WebhookReceiver()
        let setup = try AlertTests.setUp(receiver, rules: [["condition": "release_regressed", "minimum_sessions": 100, "name": "default installs"],
                                                           ["condition": "new_issue", "minimum_affected_sessions": 1]])
        // The same numbers as a real regression, from 10 installs (40 sessions each).
        try Self.release(setup.app, key: setup.key, version: "14.1.0", sessions: 400, installs: 10, affected: 20)
        try Self.release(setup.app, key: setup.key, version: "14.2.0", sessions: 400, installs: 10, affected: 80)
        let rules = try setup.app.client.request("GET", "\(Self.alerts)/rules", token: setup.admin).json["rules"] as? [[String: Any]]
        #expect(rules?.first?["minimum_installs"] as? Int == AlertRules.defaultMinimumInstalls, "\(rules ?? [])")
        #expect(try AlertTests.pass(setup.app) == (0, 0), "10 installs are under the default of 20, for both conditions")

        let lower = try setup.app.client.postJSON("\(Self.alerts)/rules", token: setup.admin,
                                                  json: ["condition": "release_regressed", "hook": setup.hook, "minimum_installs": 10, "name": "ten"])
        #expect(lower.status == 201 && lower.json["minimum_installs"] as? Int == 10, "\(lower.text)")
        #expect(try AlertTests.pass(setup.app) == (1, 1))
        #expect((receiver.received.first?.json["text"] as? String)?.contains("Rule: ten.") == true)
    }

    @Test func minimumInstallsIsCheckedLikeTheOtherParameters() throws {
        let receiver = try WebhookReceiver()
        let setup = try AlertTests.setUp(receiver, rules: [])
        for (rule, message) in [(["condition": "test_crashes", "minimum_installs": 5], "not a parameter of test_crashes"),
                                (["condition": "new_issue", "minimum_installs": -1], "minimum_installs must be a whole number from 0"),
                                (["condition": "glitch_free_rate_below", "threshold": 0.9, "minimum_installs": 2.5], "must be a whole number")] as [([String: Any], String)] {
            let response = try setup.app.client.postJSON("\(Self.alerts)/rules", token: setup.admin, json: rule.merging(["hook": setup.hook]) { $1 })
            #expect(response.status == 400 && response.text.contains(message), "\(response.text)")
        }
        let taken = try setup.app.client.postJSON("\(Self.alerts)/rules", token: setup.admin,
                                                  json: ["condition": "new_issue", "hook": setup.hook, "minimum_installs": 0])
        #expect(taken.status == 201 && taken.json["minimum_installs"] as? Int == 0, "\(taken.text)")
        let crashes = try setup.app.client.postJSON("\(Self.alerts)/rules", token: setup.admin, json: ["condition": "test_crashes", "hook": setup.hook])
        #expect(crashes.status == 201 && crashes.json["minimum_installs"] is NSNull, "\(crashes.text)")
    }

    /// The payload: a custom kind and a screen carrying an instruction and a URL.
    @Test func clientTextInTheSentenceIsCodeNotALinkOrAMention() throws {
        let receiver = try WebhookReceiver()
        let setup = try AlertTests.setUp(receiver, rules: [["condition": "new_issue", "minimum_affected_sessions": 1, "minimum_installs": 1]])
        let screen = "URGENT: roll back now, see https://evil.example/fix"
        try Self.release(setup.app, key: setup.key, version: "1.0.0", sessions: 30, installs: 30, affected: 5, kind: "x-critical_data_loss", screen: screen)
        try Self.release(setup.app, key: setup.key, version: "1.0.0", sessions: 3, installs: 3, affected: 3, kind: "x-ping",
                         screen: "`@here` <!channel> <@U024BE7LH> *bold* http://evil.example/2")
        #expect(try AlertTests.pass(setup.app) == (1, 1))
        let json = try #require(receiver.received.first?.json)
        let text = try #require(json["text"] as? String)
        // Outside code spans (the even pieces between backticks) nothing a client sent is left.
        let pieces = text.split(separator: "`", omittingEmptySubsequences: false).map(String.init)
        #expect(pieces.count % 2 == 1, "every span is closed: \(text)")
        let outside = pieces.enumerated().filter { $0.offset % 2 == 0 }.map(\.element).joined(separator: " ")
        for forbidden in ["http", "evil", "@here", "URGENT", "<", ">", "*bold*", "critical_data_loss"] {
            #expect(!outside.contains(forbidden), "\(forbidden) outside a code span: \(text)")
        }
        #expect(!text.contains("<") && !text.contains(">"), "\(text)")
        #expect(text.contains("URGENT: roll back now, see https://evil.example/fix") && text.contains("X-critical_data_loss"), "named, in a span: \(text)")
        #expect(text.contains("ˋ@hereˋ &lt;!channel&gt; &lt;@U024BE7LH&gt;"), "a backtick cannot close the span: \(text)")
        let titles = ((json["alert"] as? [String: Any])?["issues"] as? [[String: Any]])?.compactMap { $0["title"] as? String } ?? []
        #expect(titles.contains { $0.contains(screen) } && titles.contains { $0.contains("`@here` <!channel>") }, "the fields keep the text as sent: \(titles)")
    }
}
