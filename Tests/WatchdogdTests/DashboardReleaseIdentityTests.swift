import Foundation
import Testing

/// The dashboard in headless Chromium against releases whose build strings are odd (quotes,
/// brackets, parentheses, slashes, percent signs, non-ASCII), the base-vs-target overlay of
/// Over time, and the Config effect (cohort) view.
@Suite(.serialized) struct DashboardReleaseIdentityTests {
    static let app = "com.example.mail"
    /// In posting order; each is the newest (highest version) once it is posted. The last one
    /// holds what a query string gives meaning to (`&`, `=`, `#`, `+`, a valid `%25` escape).
    static let odd = [("1.0.0", "9900\">x"), ("2.0.0", "1 (2)"), ("3.0.0", "a/b"), ("4.0.0", "50%"), ("5.0.0", "ünï"), ("6.0.0", "7&b=8 #9+%25")]

    static func ago(_ seconds: TimeInterval) -> String { ISO8601DateFormatter().string(from: Date().addingTimeInterval(-seconds)) }

    /// Text as Chromium's `--dump-dom` writes a text node.
    static func html(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\u{a0}", with: "&nbsp;")
    }

    /// Everything but letters and digits percent-encoded (for the dashboard's own URL).
    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    /// The opaque release id as the API documents it: `r` + hex of the UTF-8 of `version\nbuild`.
    static func releaseID(_ version: String, _ build: String) -> String {
        "r" + Array("\(version)\n\(build)".utf8).map { String(format: "%02x", $0) }.joined()
    }

    /// The rendered view (`<main>`), after checking it rendered and shows no error.
    static func view(_ dom: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) -> String {
        let main = dom.components(separatedBy: "<main id=\"main\">").last?.components(separatedBy: "</main>").first ?? ""
        #expect(!main.isEmpty, "\(what): no main", sourceLocation: sourceLocation)
        #expect(!main.contains("Loading…"), "\(what): never finished loading", sourceLocation: sourceLocation)
        #expect(!main.contains("class=\"error\""), "\(what): shows an error: \(main.prefix(600))", sourceLocation: sourceLocation)
        #expect(!main.contains("no such release"), "\(what): a picker did not know its release", sourceLocation: sourceLocation)
        return main
    }

    /// The text of the first element with `data-role=role` (client text is rendered with a
    /// `title` and a class, so the tag's attributes are not compared).
    static func roleText(_ main: String, _ role: String) -> String? {
        element(main, "data-role=\"\(role)\"")?.text
    }

    /// The start tag holding `fragment`, and the text that follows it up to the next tag.
    static func element(_ main: String, _ fragment: String) -> (tag: String, text: String)? {
        guard let found = main.range(of: fragment), let open = main[..<found.lowerBound].lastIndex(of: "<"),
              let close = main[found.upperBound...].firstIndex(of: ">") else { return nil }
        let rest = main[main.index(after: close)...]
        return (String(main[open...close]), String(rest.prefix { $0 != "<" }))
    }

    /// Rows of the table with `data-role=role`, header row excluded.
    static func rows(_ main: String, role: String) -> [String] {
        guard let start = main.range(of: "data-role=\"\(role)\"") else { return [] }
        let table = main[start.upperBound...].components(separatedBy: "</table>").first ?? ""
        let body = table.components(separatedBy: "<tbody>").last ?? ""
        return Array(body.components(separatedBy: "<tr").dropFirst())
    }

    /// `number(value, 1)` of the dashboard: en-US grouping, one decimal, halves away from zero.
    static func oneDecimal(_ value: Double) -> String {
        let formatter = NumberFormatter()
        formatter.locale = Locale(identifier: "en_US")
        formatter.numberStyle = .decimal
        formatter.minimumFractionDigits = 1
        formatter.maximumFractionDigits = 1
        formatter.roundingMode = .halfUp
        return formatter.string(from: value as NSNumber) ?? "?"
    }

    /// Sessions of a release, `perInstall` per install (`installs` named `prefix-n`), started `age` seconds ago.
    static func sessions(_ daemon: Daemon, key: String, version: String, build: String, installs: [String], perInstall: Int, age: TimeInterval) throws -> [(id: String, install: String)] {
        var made: [(id: String, install: String)] = []
        var batch: [[String: Any]] = []
        for install in installs {
            for _ in 0..<perInstall {
                var session = Fixtures.session(version: version, build: build)
                session["install_id"] = install
                session["started_at"] = ago(age)
                made.append((session["id"] as? String ?? "", install))
                batch.append(session)
            }
        }
        let response = try daemon.client.postJSON("/v1/sessions", token: key, json: ["sessions": batch])
        #expect(response.status == 202, "\(response.text)")
        return made
    }

    /// One view-frame report in each of `sessions`, `age` seconds ago (several in one session: a flood).
    static func reports(_ daemon: Daemon, key: String, version: String, build: String, in sessions: [(id: String, install: String)], age: TimeInterval) throws {
        let reports = try sessions.map { session -> [String: Any] in
            var report = try Fixtures.freshReport(version: version, build: build, kind: "view_frame_mismatch", sessionID: session.id)
            report["install_id"] = session.install
            report["occurred_at"] = ago(age)
            return report
        }
        let response = try daemon.client.postJSON("/v1/reports", token: key, json: ["reports": reports])
        #expect(response.status == 202 && response.json["accepted"] as? Int == reports.count, "\(response.text)")
    }

    static func signIn(_ daemon: Daemon, _ browser: Browser, role: String) throws -> String {
        let token = try daemon.addToken(role: role, name: "\(role) in chromium")
        let link = try #require(try daemon.client.request("POST", "/v1/auth/links", token: token).json["path"] as? String)
        _ = try browser.dom("http://127.0.0.1:\(daemon.port)\(link)")
        return token
    }

    @Test func everyDefaultViewAndEveryPickedReleaseWorksWhateverTheBuildString() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp(Self.app)
        let browser = Browser()
        let viewer = try Self.signIn(daemon, browser, role: "viewer")
        let base = "http://127.0.0.1:\(daemon.port)/#/"
        let app = "app=\(Self.app)"
        var posted: [(version: String, build: String, text: String, id: String)] = []

        for (index, (version, build)) in Self.odd.enumerated() {
            let installs = (0..<4).map { "I-\(index)-\($0)" }
            let made = try Self.sessions(daemon, key: key, version: version, build: build, installs: installs, perInstall: 3, age: 3600)
            try Self.reports(daemon, key: key, version: version, build: build, in: Array(made.prefix(index + 2)), age: 1800)
            let text = "\(version) (\(build))"
            let rows = try daemon.client.request("GET", "/v1/apps/\(Self.app)/releases", token: viewer).json["releases"] as? [[String: Any]] ?? []
            let row = try #require(rows.first, "releases of \(text)")
            #expect(row["release"] as? String == text, "the newest release is the one just posted")
            let id = try #require(row["id"] as? String)
            #expect(id == Self.releaseID(version, build), "the id is the documented one")
            posted.append((version, build, text, id))
            let newest = Self.html(text)
            let previous = posted.count > 1 ? posted[posted.count - 2] : nil

            // The default views, with the odd release the newest.
            let releases = Self.view(try browser.dom("\(base)releases?\(app)"), "releases with \(text) newest")
            #expect(releases.contains(">\(newest)</a>"), "releases: \(text) listed")

            let compare = Self.view(try browser.dom("\(base)compare?\(app)"), "compare with \(text) newest")
            if let previous {
                #expect(compare.contains("<p class=\"sentence\">\(newest) against \(Self.html(previous.text)): "), "compare: default is the previous release against \(text)")
                #expect(compare.range(of: #"× (fewer|more) sessions with keyboard glitches"#, options: .regularExpression) != nil
                    || compare.contains("sessions with keyboard glitches appeared"), "compare: \(text) has a sentence")
                #expect(compare.contains("data-role=\"concentration\""), "compare: concentration shown")
            } else {
                #expect(compare.contains("needs two releases"), "compare: one release")
            }

            let timeline = Self.view(try browser.dom("\(base)timeline?\(app)"), "timeline with \(text) newest")
            if let previous {
                #expect(Self.roleText(timeline, "overlay-target") == newest, "timeline: \(text) is the target")
                #expect(Self.roleText(timeline, "overlay-base") == Self.html(previous.text), "timeline: the previous release is the base")
                #expect(!Self.rows(timeline, role: "overlay-table").isEmpty, "timeline: the overlay has a table")
            }
            #expect(timeline.contains(">\(newest)</span>: share of sessions with keyboard glitches, by kind</h2>"), "timeline: \(text) by kind")

            let issues = Self.view(try browser.dom("\(base)issues?\(app)"), "issues with \(text) newest")
            let list = try daemon.client.request("GET", "/v1/apps/\(Self.app)/issues?release=\(id)", token: viewer).json["issues"] as? [[String: Any]] ?? []
            let title = try #require(list.first?["title"] as? String, "issues of \(text) have a title")
            #expect(Self.roleText(issues, "release") == newest, "issues: of \(text)")
            #expect(issues.contains(">\(Self.html(title))</a>"), "issues: \(text)'s issue listed by its title")

            let keyboard = Self.view(try browser.dom("\(base)keyboard?\(app)"), "keyboard with \(text) newest")
            #expect(keyboard.contains("iPhone15,2"), "keyboard: heights listed")

            let reportsView = Self.view(try browser.dom("\(base)reports?\(app)"), "reports with \(text) newest")
            #expect(reportsView.contains("\">\(newest)</span></td>"), "reports: \(text)'s reports listed")
        }

        // Each odd release picked explicitly: by id (what the pickers write), and by its display
        // text (links made before ids).
        for (index, release) in posted.enumerated() {
            let text = Self.html(release.text)
            let other = posted[(index + 1) % posted.count]
            let compare = Self.view(try browser.dom("\(base)compare?\(app)&base=\(other.id)&target=\(release.id)"), "compare \(release.text) by id")
            #expect(compare.contains("<p class=\"sentence\">\(text) against \(Self.html(other.text)): "), "compare: \(release.text) picked")
            let byText = Self.view(try browser.dom("\(base)compare?\(app)&base=\(Self.encoded(release.text))&target=\(Self.encoded(other.text))"), "compare \(release.text) by text")
            #expect(byText.contains("<p class=\"sentence\">\(Self.html(other.text)) against \(text): "), "compare: \(release.text) named by its text")

            let timeline = Self.view(try browser.dom("\(base)timeline?\(app)&base=\(release.id)&target=\(other.id)"), "timeline \(release.text)")
            #expect(Self.roleText(timeline, "overlay-base") == text, "timeline: \(release.text) picked as base")

            let issues = Self.view(try browser.dom("\(base)issues?\(app)&release=\(Self.encoded(release.text))"), "issues \(release.text) by text")
            #expect(Self.roleText(issues, "release") == text, "issues: \(release.text) named by its text")
            #expect(issues.contains("<a href=\"#/reports?"), "issues: \(release.text) has issues")

            let keyboard = Self.view(try browser.dom("\(base)keyboard?\(app)&release=\(release.id)"), "keyboard \(release.text)")
            let picked = Self.element(keyboard, "<option value=\"\(release.id)\"")
            #expect(picked?.tag.contains("selected=\"selected\"") == true && picked?.text == text, "keyboard: \(release.text) picked")
            #expect(keyboard.contains("iPhone15,2"), "keyboard: heights of \(release.text)")

            let reportsView = Self.view(try browser.dom("\(base)reports?\(app)&release=\(release.id)"), "reports \(release.text)")
            #expect(reportsView.contains("data-role=\"filters\">Only release <span") && reportsView.contains("\">\(text)</span>.</p>"), "reports: filtered by \(release.text)")
            #expect(reportsView.components(separatedBy: "\">\(text)</span></td>").count - 1 == index + 2, "reports: \(release.text)'s \(index + 2) reports, no other's")
        }

        // Base = target is refused in the page, however each side is named.
        let same = posted[2]
        let refused = try browser.dom("\(base)compare?\(app)&base=\(same.id)&target=\(Self.encoded(same.text))")
        #expect(refused.contains("data-role=\"same-release\""), "compare: base = target refused")
        #expect(!refused.contains("<p class=\"sentence\">"), "compare: no sentence for base = target")
    }

    @Test func overTimeOverlaysBaseAndTargetByDaysSinceFirstSessionWithATableMarkingPartialDays() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp(Self.app)
        let browser = Browser()
        let viewer = try Self.signIn(daemon, browser, role: "viewer")
        let app = "app=\(Self.app)"
        // Base 1.0 (b"1): sessions three days ago and today; target 2.0 (t/2): today only, and a
        // flood of 40 reports from one session of one install. "Today" is today's UTC day whatever
        // the time: sessions halfway between midnight and now, reports a quarter of the way back
        // from now (a fixed hour ago was yesterday between 00:00 and 01:00, and the test failed).
        var sinceMidnight = Date().timeIntervalSince1970.truncatingRemainder(dividingBy: 86_400)
        if sinceMidnight < 10 { Thread.sleep(forTimeInterval: 10 - sinceMidnight); sinceMidnight = 10 }
        let (started, reported) = (sinceMidnight / 2, sinceMidnight / 4)
        let (baseVersion, baseBuild, targetVersion, targetBuild) = ("1.0", "b\"1", "2.0", "t/2")
        let early = try Self.sessions(daemon, key: key, version: baseVersion, build: baseBuild, installs: (0..<10).map { "B-\($0)" }, perInstall: 2, age: 3 * 86_400 + started)
        let late = try Self.sessions(daemon, key: key, version: baseVersion, build: baseBuild, installs: (0..<5).map { "B-\($0)" }, perInstall: 2, age: started)
        try Self.reports(daemon, key: key, version: baseVersion, build: baseBuild, in: Array(early.prefix(8)), age: 3 * 86_400 + reported)
        try Self.reports(daemon, key: key, version: baseVersion, build: baseBuild, in: Array(late.prefix(3)), age: reported)
        let target = try Self.sessions(daemon, key: key, version: targetVersion, build: targetBuild, installs: (0..<10).map { "T-\($0)" }, perInstall: 2, age: started)
        try Self.reports(daemon, key: key, version: targetVersion, build: targetBuild, in: Array(target.prefix(2)) + Array(repeating: target[5], count: 40), age: reported)
        let baseID = Self.releaseID(baseVersion, baseBuild), targetID = Self.releaseID(targetVersion, targetBuild)

        let response = try daemon.client.request("GET", "/v1/apps/\(Self.app)/overlay?base=\(baseID)&target=\(targetID)&bucket=day", token: viewer)
        #expect(response.status == 200, "\(response.text)")
        let offsets = response.json["offsets"] as? [Int] ?? []
        let sides = response.json["releases"] as? [[String: Any]] ?? []
        #expect(offsets.count >= 4, "three days and today: \(offsets)")
        #expect(sides.map { $0["role"] as? String } == ["base", "target"])

        // The share of sessions with a glitch by default, reports per 1,000 sessions as a choice.
        for (measure, key, shown) in [("", "shares", { (value: Double) in "\(Self.oneDecimal(value * 100)) %" }), ("&measure=rate", "rates", { Self.oneDecimal($0) })] {
            let dom = try browser.dom("http://127.0.0.1:\(daemon.port)/#/timeline?\(app)\(measure)")
            let main = Self.view(dom, "timeline\(measure)")
            #expect(Self.roleText(main, "overlay-base") == Self.html("\(baseVersion) (\(baseBuild))"))
            #expect(Self.roleText(main, "overlay-target") == Self.html("\(targetVersion) (\(targetBuild))"))
            #expect(main.contains("<canvas"), "the chart was drawn")
            let rows = Self.rows(main, role: "overlay-table")
            #expect(rows.count == offsets.count, "one table row per day")
            var partials = 0, gaps = 0
            for (index, offset) in offsets.enumerated() where index < rows.count {
                let row = rows[index]
                #expect(row.contains(">day \(offset)</td>"), "row \(index) is day \(offset)")
                // Each side's first cell (of four: the measure, sessions, affected, reports): the
                // figure as the API gives it, "—" past now, and "partial" for today.
                var cells = row.components(separatedBy: "<td").dropFirst().map { String($0) }
                cells.removeFirst()
                for (side, json) in sides.enumerated() {
                    let value = (json[key] as? [Any])?[index] as? Double
                    let sessions = (json["sessions"] as? [Any])?[index] as? Int
                    let partial = (json["partial"] as? [Bool])?[index] ?? false
                    let cell = cells.count > side * 4 ? cells[side * 4] : ""
                    if sessions == nil {
                        #expect(cell.contains(">—</td>"), "day \(offset) of \(json["role"] ?? ""): a gap, not 0: \(cell)")
                        gaps += 1
                    } else if let value {
                        #expect(cell.contains(shown(value)), "day \(offset) of \(json["role"] ?? ""), \(key): \(shown(value)) in \(cell)")
                    }
                    #expect(cell.contains("class=\"badge partial\">partial<") == partial, "day \(offset) of \(json["role"] ?? ""): partial is \(partial): \(cell)")
                    if partial { partials += 1 }
                }
            }
            #expect(partials == 2, "today is partial for both releases (base day 3, target day 0)")
            #expect(gaps >= 3, "the target's days after today are gaps")
        }

        // The flood: counted apart, visible as a flood.
        let releases = try daemon.client.request("GET", "/v1/apps/\(Self.app)/releases", token: viewer).json["releases"] as? [[String: Any]] ?? []
        let flooded = try #require(releases.first { $0["id"] as? String == targetID }?["flooded_reports"] as? Int)
        #expect(flooded > 0)
        let releasesView = Self.view(try browser.dom("http://127.0.0.1:\(daemon.port)/#/releases?\(app)"), "releases")
        #expect(releasesView.contains("data-role=\"flood-warning\""), "releases: the flood is called a flood")
        let compare = Self.view(try browser.dom("http://127.0.0.1:\(daemon.port)/#/compare?\(app)"), "compare")
        #expect(compare.contains("data-role=\"flood-warning\""), "compare: the flood is called a flood")
        #expect(compare.contains("data-role=\"report-rates\""), "compare: the report rates, as a secondary figure")
        #expect(compare.contains(">\(flooded)</td>"), "compare: the \(flooded) flooded reports")
        // Fewer sessions with a glitch, though more reports per session even after the cap: the
        // headline must be about sessions.
        let overall = try #require(try daemon.client.request("GET", "/v1/apps/\(Self.app)/compare?base=\(baseID)&target=\(targetID)", token: viewer).json["overall"] as? [String: Any])
        let ratio = try #require(overall["ratio"] as? Double)
        #expect(ratio < 1 && (overall["report_rate_ratio"] as? Double ?? 0) > 1, "the scenario: \(overall)")
        // An interval that holds 1 is said as its two ends and "no change" (issue 44), else "N× fewer".
        let interval = overall["interval"] as? [String: Any]
        let lower = interval?["lower"] as? Double ?? 0, upper = interval?["upper"] as? Double
        if lower < 1, upper.map({ $0 > 1 }) ?? true {
            #expect(compare.contains(" fewer sessions with keyboard glitches: no change (always-valid 95 % interval)") && compare.contains(": between "),
                    "compare: the headline is about sessions, and says no change")
        } else {
            #expect(compare.contains(": \(String(format: "%.1f", 1 / ratio))× fewer sessions with keyboard glitches, always-valid 95 % interval "), "compare: the headline is about sessions")
        }
    }

    @Test func configEffectComparesTheInstallsARuleMatchedWithTheRest() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp(Self.app)
        let admin = try daemon.addToken(role: "admin")
        let rule = #"{"rules": [{"id": "fix-half", "name": "auto-fix half", "match": {"percent": 50}, "set": {"auto_fix": true}}]}"#
        let patched = try daemon.client.request("PATCH", "/v1/admin/apps/\(Self.app)/config", token: admin, body: Array(rule.utf8))
        #expect(patched.status == 200, "\(patched.text)")
        // Which installs the rule picks, as the apps see it; matched installs glitch half as often.
        let (version, build) = ("3.0.0", "50% (x/y)")
        let installs = (0..<60).map { "C-\($0)" }
        var matched: Set<String> = []
        for install in installs {
            let config = try daemon.client.request("GET", "/v1/config?app=\(Self.app)&version=\(version)&build=\(Self.encoded(build))&channel=beta&install_id=\(install)", token: key)
            #expect(config.status == 200, "\(config.text)")
            if ((config.json["config"] as? [String: Any]) ?? config.json)["auto_fix"] as? Bool == true { matched.insert(install) }
        }
        #expect(matched.count > 10 && matched.count < 50, "about half: \(matched.count)")
        let made = try Self.sessions(daemon, key: key, version: version, build: build, installs: installs, perInstall: 4, age: 3600)
        let glitching = made.enumerated().filter { index, session in index % 4 < (matched.contains(session.install) ? 1 : 2) }.map(\.element)
        try Self.reports(daemon, key: key, version: version, build: build, in: glitching, age: 1800)
        let releaseID = Self.releaseID(version, build)

        let api = try daemon.client.request("GET", "/v1/apps/\(Self.app)/cohorts?release=\(releaseID)&rule=fix-half&interval=sequential", token: admin)
        #expect(api.status == 200, "\(api.text)")
        let overall = try #require(api.json["overall"] as? [String: Any])
        let ratio = try #require(overall["ratio"] as? Double)
        #expect(abs(ratio - 0.5) < 0.01, "matched installs glitch half as often: \(ratio)")
        let cohort = try #require(api.json["cohort"] as? [String: Any])
        #expect(cohort["installs_matched"] as? Int == matched.count)

        // A viewer: the rule comes from the rules list, the release and rule are the defaults.
        let browser = Browser()
        _ = try Self.signIn(daemon, browser, role: "viewer")
        let main = Self.view(try browser.dom("http://127.0.0.1:\(daemon.port)/#/cohort?app=\(Self.app)"), "cohort")
        #expect(Self.element(main, "<option value=\"fix-half\"")?.tag.contains("selected=\"selected\"") == true, "the rule is picked from the list")
        #expect(main.contains("data-role=\"cohort-explained\""), "what the cohorts are")
        let sentence = "auto_fix on (rule fix-half matched "
        #expect(main.contains(sentence), "the effect in words")
        #expect(main.contains("\(matched.count) of \(installs.count)): \(String(format: "%.1f", 1 / ratio))× fewer sessions with keyboard glitches, always-valid 95 % interval "),
                "the ratio in words")
        let verdict = try #require(overall["verdict"] as? String)
        #expect(main.contains("class=\"verdict \(verdict)\""), "the verdict")
        #expect(main.contains("<li class=\"kind-sentence\">auto_fix on: "), "per kind")
        #expect(main.contains("<td>Matched</td>") && main.contains("<td>Not matched</td>"), "both cohorts side by side")

        // The rule named in the URL, a rule that does not exist.
        let named = Self.view(try browser.dom("http://127.0.0.1:\(daemon.port)/#/cohort?app=\(Self.app)&release=\(Self.encoded("\(version) (\(build))"))&rule=fix-half"), "cohort by text")
        #expect(named.contains(sentence))
        let unknown = try browser.dom("http://127.0.0.1:\(daemon.port)/#/cohort?app=\(Self.app)&release=\(releaseID)&rule=nope")
        #expect(unknown.contains("data-role=\"cohort-error\""), "an unknown rule is said so")
        #expect(unknown.contains("fix-half"), "with the rules there are")
    }
}
