import Foundation
import Testing
import WatchdogServer
import WatchdogTesting
import WatchdogWire

/// The weekly digest: its numbers are `compare`'s for the same releases, and the weekly one is
/// queued once per week per hook, a restart neither skipping nor repeating it. Time is the
/// test clock, moved from the data's own days (never today's date).
@Suite struct NotifyDigestTests {
    static func compare(_ setup: NotifyTests.Setup, target: String) throws -> [String: Any] {
        let query = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let response = try setup.app.client.request("GET", "/v1/apps/\(NotifyTests.app)/compare?target=\(query)", token: setup.admin)
        #expect(response.status == 200, "\(response.text)")
        return response.json
    }

    /// 14.1.0, 14.2.0 (hostile build) regressed against it, and one new issue in the target.
    static func releases(_ setup: NotifyTests.Setup) throws {
        try NotifyTests.regress(setup)
        try AlertTests.release(setup.app, key: setup.key, version: "14.2.0", build: NotifyTests.hostileBuild, sessions: 0, affected: 0)
    }

    @Test func aDigestSentNowCarriesCompareNumbersForTheWeeksReleases() throws {
        let receiver = try WebhookReceiver()
        let setup = try NotifyTests.setUp(hook: ["name": "digest", "url": receiver.url, "digest": true], rule: false)
        let secret = try #require(setup.hook["secret"] as? String)
        try Self.releases(setup)
        let queued = try setup.app.client.request("POST", "\(AlertTests.alerts)/hooks/\(setup.hookID)/digest", token: setup.admin)
        #expect(queued.status == 202, "\(queued.text)")
        #expect(try setup.app.application.deliverAlerts() == 1)
        let post = try #require(receiver.received.first)
        #expect(post.isSigned(with: secret) && post.headers["watchdog-event"] == "digest")
        let digest = try #require(post.json["digest"] as? [String: Any])
        #expect(digest["app"] as? String == NotifyTests.app)
        let releases = try #require(digest["releases"] as? [[String: Any]])
        #expect(releases.map { $0["release"] as? String } == [NotifyTests.hostileRelease, "14.1.0 (1)"], "newest first")
        let target = releases[0]
        let compared = try Self.compare(setup, target: NotifyTests.hostileRelease)
        let overall = try #require(compared["overall"] as? [String: Any])
        #expect(target["base"] as? String == "14.1.0 (1)" && (compared["base"] as? [String: Any])?["release"] as? String == "14.1.0 (1)")
        #expect(target["verdict"] as? String == "regressed" && target["verdict"] as? String == overall["verdict"] as? String)
        let comparison = try #require(target["comparison"] as? [String: Any])
        // Field by field, the numbers of `compare`'s `overall`.
        func canonical(_ value: Any?) -> String {
            guard let value else { return "absent" }
            let data = try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys, .fragmentsAllowed])
            return data.map { String(decoding: $0, as: UTF8.self) } ?? "\(value)"
        }
        for key in overall.keys.sorted() {
            #expect(canonical(comparison[key]) == canonical(overall[key]), "\(key)")
        }
        #expect(Set(comparison.keys) == Set(overall.keys))
        let glitchFree = (compared["target"] as? [String: Any])?["glitch_free_session_rate"] as? Double
        #expect(glitchFree != nil && target["glitch_free_session_rate"] as? Double == glitchFree)
        #expect(target["sessions"] as? Int == 400 && target["test_crashes"] as? Int == 0)
        let issuesView = try setup.app.client.request("GET", "/v1/apps/\(NotifyTests.app)/issues?release=\(NotifyTests.hostileRelease.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")",
                                                      token: setup.admin).json["issues"] as? [[String: Any]] ?? []
        #expect(target["new_issues"] as? Int == issuesView.filter { $0["is_new"] as? Bool == true }.count)
        #expect(target["regressed_issues"] as? Int == issuesView.filter { $0["regressed"] as? Bool == true }.count)
        #expect(releases[1]["base"] == nil && releases[1]["verdict"] == nil, "the oldest has no predecessor")
        let text = try #require(post.json["text"] as? String)
        #expect(text.contains("regressed against") && !text.contains("<b>"), "the generic text is Slack-escaped as an alert's: \(text)")
    }

    @Test func theWeeklyDigestIsQueuedOncePerWeekAcrossARestart() throws {
        let receiver = try WebhookReceiver()
        let clock = TestClock()
        let setup = try NotifyTests.setUp(hook: ["name": "digest", "url": receiver.url, "digest": true], rule: false, app: try TestApplication(clock: clock))
        try Self.releases(setup)
        let listed = try setup.app.client.request("GET", "/v1/apps/\(NotifyTests.app)/releases", token: setup.admin).json["releases"] as? [[String: Any]] ?? []
        let firstSeen = try #require(listed.compactMap { ($0["first_seen"] as? String).flatMap(Timestamp.parseMilliseconds) }.max())
        // A week after the newest release appeared: its week is the last complete one.
        clock.advance(milliseconds: firstSeen + 7 * 86_400_000 - clock.now)
        #expect(try setup.app.application.queueDigests() == 1)
        #expect(try setup.app.application.queueDigests() == 0, "once per week")
        try setup.app.restart()
        #expect(try setup.app.application.queueDigests() == 0, "a restart does not send it again")
        #expect(try setup.app.application.deliverAlerts() == 1)
        let digest = try #require(receiver.received.first?.json["digest"] as? [String: Any])
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let week = calendar.dateComponents([.yearForWeekOfYear, .weekOfYear], from: Date(timeIntervalSince1970: Double(firstSeen) / 1000))
        #expect(digest["week"] as? String == String(format: "%04d-W%02d", week.yearForWeekOfYear ?? 0, week.weekOfYear ?? 0))
        #expect((digest["releases"] as? [[String: Any]])?.contains { $0["release"] as? String == NotifyTests.hostileRelease } == true)
        #expect(receiver.received.first?.deliveryID?.hasPrefix("digest-\(setup.hookID)-") == true)

        // The next week: one more digest, of no new release (deltas, not totals).
        clock.advance(milliseconds: 7 * 86_400_000)
        #expect(try setup.app.application.queueDigests() == 1)
        #expect(try setup.app.application.deliverAlerts() == 1)
        let next = try #require(receiver.received.last?.json["digest"] as? [String: Any])
        #expect((next["releases"] as? [[String: Any]])?.isEmpty == true && next["week"] as? String != digest["week"] as? String)
    }

    @Test func aTeamsDigestAndAPagerDutyRefusal() throws {
        let receiver = try WebhookReceiver(status: 202)
        let setup = try NotifyTests.setUp(hook: ["kind": "teams", "url": receiver.url, "digest": true], rule: false)
        try Self.releases(setup)
        #expect(try setup.app.client.request("POST", "\(AlertTests.alerts)/hooks/\(setup.hookID)/digest", token: setup.admin).status == 202)
        #expect(try setup.app.application.deliverAlerts() == 1)
        let card = try #require(((receiver.received.first?.json["attachments"] as? [[String: Any]])?.first?["content"] as? [String: Any]))
        let runs = (card["body"] as? [[String: Any]] ?? []).flatMap { $0["inlines"] as? [[String: Any]] ?? [] }.compactMap { $0["text"] as? String }
        #expect(runs.contains { $0.contains(NotifyTests.hostileRelease) && $0.contains("regressed against") }, "\(runs)")
        let pagerDuty = try setup.app.client.postJSON("\(AlertTests.alerts)/hooks", token: setup.admin,
                                                      json: ["kind": "pagerduty", "url": receiver.url, "routing_key": NotifyTests.routingKey])
        let refused = try setup.app.client.request("POST", "\(AlertTests.alerts)/hooks/\(pagerDuty.json["id"] as? String ?? "")/digest", token: setup.admin)
        #expect(refused.status == 409 && refused.json["error"] != nil, "\(refused.text)")
    }
}
