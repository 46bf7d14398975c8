import Foundation
import Testing
import WatchdogTesting

/// `GET /v1/metrics/releases` (issue 42, Grafana): release health in the Prometheus text
/// format, bounded by what no client can add, equal to what `/releases` and `/gate` say.
@Suite struct ReleaseMetricsTests {
    /// The series of a scrape: every line but the comments.
    static func series(_ text: String) -> [Substring] {
        text.split(separator: "\n").filter { !$0.hasPrefix("#") }
    }

    /// The value of the one series whose line starts with `prefix` (name and labels).
    static func value(_ text: String, _ prefix: String) -> Double? {
        let lines = series(text).filter { $0.hasPrefix(prefix) }
        guard lines.count == 1 else { return nil }
        return lines.first.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    /// The distinct `release` label values of a scrape.
    static func releases(_ text: String) -> Set<String> {
        Set(series(text).compactMap { line in
            line.range(of: #"release=""#).map { start in String(line[start.upperBound...].prefix { $0 != "\"" }) }
        })
    }

    @Test func tenThousandReleasesOfAForgerStayTenReleasesOfSeries() throws {
        let app = try TestApplication()
        // Open admission lists every release on sight: the worst case a forger can reach.
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let count = 10_000
        for start in stride(from: 0, to: count, by: 500) {
            let batch = (start..<(start + 500)).map { index -> [String: Any] in
                var session = Fixtures.session(version: "1.0.\(index)", build: "1")
                session["install_id"] = "I-\(index)"
                return session
            }
            #expect(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": batch]).status == 202)
        }
        // Reports of 150 of an app's own kinds: past the custom-kind cap, and summed as x-*.
        let reports = try (0..<150).map { index in try Fixtures.freshReport(version: "1.0.\(count - 1)", build: "1", kind: "x-k\(index)") }
        #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": reports]).status == 202)
        let listed = try app.client.request("GET", "/v1/apps/com.example.mail/releases?limit=1", token: viewer)
        #expect(listed.json["total"] as? Int == count, "every forged release is listed under open admission")

        let scrape = try app.client.request("GET", "/v1/metrics/releases", token: viewer)
        #expect(scrape.status == 200)
        #expect(Self.releases(scrape.text) == Set(((count - 10)..<count).map { "1.0.\($0) (1)" }), "the newest ten listed releases")
        // Per release at most: sessions, affected, glitch-free, test crashes, 5 verdict states,
        // ratio and its two bounds, and the built-in kinds plus x-*.
        let kinds = 8
        #expect(Self.series(scrape.text).count <= 10 * (4 + 5 + 3 + kinds), "\(Self.series(scrape.text).count) series")
        #expect(Self.value(scrape.text, #"watchdog_release_reports{app="com.example.mail",release="1.0.9999 (1)",kind="x-*"}"#) == 150)
        #expect(!scrape.text.contains("x-k"), "an app's own kinds are not labels")

        let widest = try app.client.request("GET", "/v1/metrics/releases?releases=50", token: viewer)
        #expect(Self.releases(widest.text).count == 50)
        for wrong in ["51", "0", "ten"] {
            let refused = try app.client.request("GET", "/v1/metrics/releases?releases=\(wrong)", token: viewer)
            #expect(refused.status == 400 && refused.errorCode == "invalid_parameter", "\(wrong): \(refused.text)")
        }
    }

    @Test func theFiguresAreThoseOfReleasesAndTheGate() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let base = try VerdictTests.sessions(app, key: key, version: "14.1.0", build: "1", count: 600)
        let target = try VerdictTests.sessions(app, key: key, version: "14.2.0", build: "2", count: 600)
        try VerdictTests.post(app, key: key, try VerdictTests.reports(200, in: 180, of: base, version: "14.1.0", build: "1"))
        try VerdictTests.post(app, key: key, try VerdictTests.reports(40, in: 30, of: target, version: "14.2.0", build: "2"))

        let scrape = try app.client.request("GET", "/v1/metrics/releases", token: viewer).text
        let releases = try #require(try app.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer).json["releases"] as? [[String: Any]])
        for release in releases {
            let name = try #require(release["release"] as? String)
            let labels = #"{app="com.example.mail",release="\#(name)"}"#
            #expect(Self.value(scrape, "watchdog_release_sessions" + labels) == Double(release["sessions"] as? Int ?? -1))
            #expect(Self.value(scrape, "watchdog_release_affected_sessions" + labels) == Double(release["affected_sessions"] as? Int ?? -1))
            let rate = try #require(release["glitch_free_session_rate"] as? Double)
            #expect(abs((Self.value(scrape, "watchdog_release_glitch_free_ratio" + labels) ?? -1) - rate) < 1e-12)
        }
        let gate = try app.client.request("GET", "/v1/apps/com.example.mail/gate?release=14.2.0%20(2)", token: viewer).json
        let verdict = try #require(gate["verdict"] as? String)
        #expect(verdict == "improved")
        let against = #"app="com.example.mail",release="14.2.0 (2)",against="14.1.0 (1)""#
        #expect(Self.value(scrape, "watchdog_release_verdict{\(against),verdict=\"\(verdict)\"}") == 1)
        let states = Self.series(scrape).filter { $0.hasPrefix("watchdog_release_verdict{\(against)") }
        #expect(states.count == 5 && states.filter { $0.hasSuffix(" 1.0") }.count == 1, "\(states)")
        let ratio = try #require(gate["ratio"] as? Double)
        #expect(abs((Self.value(scrape, "watchdog_release_affected_ratio{\(against)}") ?? -1) - ratio) < 1e-12)
        // The oldest release has nothing to be compared with.
        #expect(Self.value(scrape, #"watchdog_release_verdict{app="com.example.mail",release="14.1.0 (1)",against="",verdict="none"}"#) == 1)
    }

    @Test func aViewerOfAnotherAppSeesNoneOfItsSeries() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        _ = try app.addApp("com.example.other")
        _ = try VerdictTests.sessions(app, key: key, version: "14.2.0", build: "2", count: 10)
        let other = try app.addToken(role: "viewer", name: "other", apps: ["com.example.other"])
        let mine = try app.addToken(role: "viewer", name: "mine", apps: ["com.example.mail"])
        let hidden = try app.client.request("GET", "/v1/metrics/releases", token: other)
        #expect(hidden.status == 200 && !hidden.text.contains("com.example.mail"), "\(hidden.text)")
        #expect(try app.client.request("GET", "/v1/metrics/releases", token: mine).text.contains(#"app="com.example.mail""#))
        #expect(try app.client.request("GET", "/v1/metrics/releases", token: key).status == 403, "not for the public ingest key")
        #expect(try app.client.request("GET", "/v1/metrics/releases").status == 401)
    }
}
