import Foundation
import Testing

/// The dashboard in a real headless Chromium, against `serve --demo`.
@Suite(.serialized) struct DashboardBrowserTests {
    @Test func theDemoDashboardShowsReleasesTheComparisonSentenceAndADrawnReport() throws {
        let daemon = try Daemon(demo: true)
        let viewer = try #require(daemon.exports["WATCHDOG_VIEWER_TOKEN"])
        let link = try #require(daemon.signInLink)
        let base = "http://127.0.0.1:\(daemon.port)"
        let browser = Browser()
        let app = "app=com.example.mail"

        let releases = try browser.dom("\(base)\(link)&next=/%23/releases?\(app)")
        #expect(releases.contains("14.2.0 (31245)") && releases.contains("14.1.0 (31102)"), "releases table")
        #expect(releases.contains("<table"))
        #expect(releases.contains("demo admin (admin)"), "signed in through the one-time link")

        let compare = try browser.dom("\(base)/#/compare?\(app)&base=14.1.0%20(31102)&target=14.2.0%20(31245)")
        #expect(compare.range(of: #"14\.2\.0 \(31245\) against 14\.1\.0 \(31102\): [0-9.]+× fewer sessions with keyboard glitches, always-valid 95 % interval [0-9.]+–[0-9.]+"#,
                              options: .regularExpression) != nil, "comparison sentence, about affected sessions")
        #expect(compare.contains("class=\"verdict improved\""))
        #expect(compare.range(of: #"Sessions with a glitch: [0-9.]+ % \([0-9,]+ of 1,200\) → [0-9.]+ % \([0-9,]+ of 1,500\)"#, options: .regularExpression) != nil,
                "affected-session rate per side")
        #expect(compare.range(of: #"Secondary: reports per 1,000 sessions [0-9.,]+ → [0-9.,]+ \([0-9.]+×\)"#, options: .regularExpression) != nil, "report rates, secondary")
        #expect(compare.range(of: #"top 1 % of installs \([0-9,]+ of [0-9,]+\) sent [0-9.]+ % of reports"#, options: .regularExpression) != nil, "concentration")
        #expect(compare.contains("Flooded (not counted)"), "flooded reports")
        #expect(compare.contains("<canvas"), "Chart.js drew the bars")
        #expect(compare.contains("data-view=\"cohort\">Config effect</a>"), "the Config effect view is in the nav")

        let id = try #require((try daemon.client.request("GET", "/v1/apps/com.example.mail/reports?kind=view_frame_mismatch&limit=1", token: viewer)
            .json["reports"] as? [[String: Any]])?.first?["id"] as? String)
        let report = try browser.dom("\(base)/#/report?\(app)&id=\(id)")
        #expect(report.contains("data-role=\"glitch-drawing\""))
        for frame in ["window", "expected", "actual"] { #expect(report.contains("data-frame=\"\(frame)\""), "\(frame) drawn") }
        #expect(report.range(of: #"Δy [+-][0-9.]+ pt"#, options: .regularExpression) != nil, "the delta in points")
        #expect(report.contains("[keyboard][tracker]"), "tagged log lines")

        for (name, route) in [("releases", "releases?\(app)"), ("compare", "compare?\(app)"), ("timeline", "timeline?\(app)"), ("issues", "issues?\(app)"),
                              ("report", "report?\(app)&id=\(id)"), ("keyboard", "keyboard?\(app)"), ("cohort", "cohort?\(app)"), ("config", "config?\(app)")] {
            let file = try browser.screenshot("\(base)/#/\(route)", name: name)
            #expect(((try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0) > 10_000, "\(name) screenshot")
        }
        print("dashboard screenshots: \(Browser.artifacts.path)")
    }

    @Test func hostileStringsFromReportsAreShownAsTextAndRunNoScript() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let admin = try daemon.addToken(role: "admin")
        let payloads = [
            #"<img src=x onerror="document.body.setAttribute('data-pwned','img')">"#,
            #"</script><script>document.body.setAttribute('data-pwned','script')</script>"#,
            "javascript:document.body.setAttribute('data-pwned','url')",
            #"<svg onload="document.body.setAttribute('data-pwned','svg')"></svg>"#,
        ]
        var report = try Fixtures.freshReport(version: "<img src=x onerror=alert(1)>", build: "<svg onload=alert(2)>")
        report["screen"] = payloads[0]
        report["view"] = ["name": payloads[1], "expected": ["x": 0, "y": 228, "width": 390, "height": 44], "actual": ["x": 0, "y": 264, "width": 390, "height": 44]]
        report["logs"] = payloads
        report["attributes"] = ["link": payloads[2], "svg": payloads[3]]
        report["device"] = ["model": String(payloads[3].prefix(60)), "idiom": "phone", "locale": String(payloads[0].prefix(60))]
        report["keyboard"] = ["visible": true, "mode": "docked", "height": 216, "input_mode": String(payloads[1].prefix(60))]
        #expect(try daemon.client.postJSON("/v1/reports", token: key, json: ["reports": [report]]).json["accepted"] as? Int == 1)
        let id = try #require(report["id"] as? String)
        let link = try #require(try daemon.client.request("POST", "/v1/auth/links", token: admin).json["path"] as? String)
        let base = "http://127.0.0.1:\(daemon.port)"
        let browser = Browser()
        let app = "app=com.example.mail"
        _ = try browser.dom("\(base)\(link)")
        // What each view must show of the report, as text: every view is checked for what it
        // renders, not only for what it must not.
        let release = "&lt;img src=x onerror=alert(1)&gt; (&lt;svg onload=alert(2)&gt;)"
        let screen = #"&lt;img src=x onerror="document.body.setAttribute('data-pwned','img')"&gt;"#
        let view = "&lt;/script&gt;&lt;script&gt;document.body.setAttribute('data-pwned','script')&lt;/script&gt;"
        let shows: [(route: String, texts: [String])] = [
            ("report?\(app)&id=\(id)", ["<h1>view-frame glitches on ", screen, release, "data-role=\"glitch-drawing\"", "javascript:document.body"]),
            ("reports?\(app)", ["href=\"#/report?app=com.example.mail&amp;id=\(id)\"", "\">\(screen)</span></td>", "\">\(view)</span></td>", "\">\(release)</span></td>"]),
            ("issues?\(app)", ["<h1>Top issues of <span data-role=\"release\"", "\">\(release)</span></h1>", "View frame mismatch · \(view) on \(screen) (docked)",
                                "<span class=\"badge new\">new</span>"]),
            ("keyboard?\(app)", [#"">&lt;svg onload="document.body.setAttribute('data-pwned','svg')"</span></td>"#, "docked</",
                                  "<td class=\"num\">1</td><td class=\"num\">216</td><td class=\"num\">216</td><td class=\"num\">216</td>"]),
            ("releases?\(app)", ["<h1>Releases of <span>com.example.mail</span></h1>", "\">\(release)</a></td>", "data-role=\"concentration\">100.0 %</span>"]),
            ("compare?\(app)", ["<h1>Compare releases</h1>", "selected=\"selected\">\(release)</option>", "This app needs two releases to compare."]),
            ("timeline?\(app)", ["<h1>Glitches over time</h1>", "\">\(release)</span>: share of sessions with keyboard glitches, by kind</h2>", "<canvas"]),
            ("cohort?\(app)", ["<h1>Config effect</h1>", "selected=\"selected\">\(release)</option>", "This app has no config rules"]),
            ("config?\(app)", ["<h2>Switches (version 0)</h2>", "data-key=\"enabled\" checked=\"checked\"", "data-key=\"auto_fix\"", "data-key=\"test_crash\""]),
        ]
        for (route, texts) in shows {
            let dom = try browser.dom("\(base)/#/\(route)")
            // The rendered views: nothing from a report may have become an element.
            let main = dom.components(separatedBy: "<main id=\"main\">").last?.components(separatedBy: "</main>").first ?? ""
            for text in texts { #expect(main.contains(text), "\(route) does not show \(text)") }
            #expect(!main.contains("<img") && !main.contains("<script"), "\(route): report text became markup")
            #expect(main.components(separatedBy: "<svg").count - 1 == main.components(separatedBy: "<svg class=\"glitch\"").count - 1, "\(route): a foreign svg")
            #expect(!dom.contains("data-pwned=\""), "\(route): a script from a report ran")
            #expect(!dom.contains("<img src=\"x\""), "\(route): report text became markup")
            #expect(!dom.contains("href=\"javascript:"), "\(route): a javascript: link")
        }
        try browser.screenshot("\(base)/#/report?\(app)&id=\(id)", name: "report-hostile-strings")
    }

    @Test func aViewersConfigPanelOffersNoSwitches() throws {
        let daemon = try Daemon()
        _ = try daemon.addApp("com.example.mail")
        let viewer = try daemon.addToken(role: "viewer", name: "qa")
        let link = try #require(try daemon.client.request("POST", "/v1/auth/links", token: viewer).json["path"] as? String)
        let browser = Browser()
        let dom = try browser.dom("http://127.0.0.1:\(daemon.port)\(link)&next=/%23/config?app=com.example.mail")
        #expect(dom.contains("qa (viewer)"))
        #expect(dom.contains("data-role=\"read-only\""))
        let switches = dom.components(separatedBy: "type=\"checkbox\"").count - 1
        #expect(switches == 3, "the viewer sees the switches")
        #expect(dom.components(separatedBy: "disabled=\"disabled\"").count - 1 == switches, "all of them disabled")
    }

    /// Roles per app in the browser: an operator limited to one app sees only that app in the
    /// dashboard's app list, and its config panel's switches are enabled (operators change config).
    @Test func anAppScopedOperatorsDashboardListsOnlyItsAppAndMayChangeItsConfig() throws {
        let daemon = try Daemon()
        _ = try daemon.addApp("com.example.mail")
        _ = try daemon.addApp("com.example.chat")
        let added = try daemon.runCommand(["tokens", "add", "--role", "operator", "--app", "com.example.chat", "ops"])
        let token = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let browser = Browser()
        let link = { try #require(try daemon.client.request("POST", "/v1/auth/links", token: token).json["path"] as? String) }
        let home = try browser.dom("http://127.0.0.1:\(daemon.port)\(try link())")
        #expect(home.contains("ops (operator)"))
        #expect(home.contains("com.example.chat") && !home.contains("com.example.mail"), "\(home.suffix(2000))")
        let config = try browser.dom("http://127.0.0.1:\(daemon.port)\(try link())&next=/%23/config?app=com.example.chat")
        #expect(!config.contains("data-role=\"read-only\""))
        // The three switches (`data-key`), not the other checkboxes of the page (a hook's digest).
        let switches = config.components(separatedBy: "<input").dropFirst().map { $0.prefix { $0 != ">" } }
            .filter { $0.contains("type=\"checkbox\"") && $0.contains("data-key=") }
        #expect(switches.count == 3 && switches.allSatisfy { !$0.contains("disabled") }, "\(switches)")
    }
}
