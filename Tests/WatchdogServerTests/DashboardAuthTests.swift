import Foundation
import Testing
import WatchdogTesting

/// The dashboard's sessions, CSRF protection, sign-in links and headers, over HTTP.
@Suite struct DashboardAuthTests {
    static func cookie(from response: TestResponse) -> String? {
        response.headers["set-cookie"]?.split(separator: ";").first.map(String.init)
    }

    @Test func pagesCarryAStrictContentSecurityPolicyAndFilesStayInTheirFolder() throws {
        let app = try TestApplication()
        let index = try app.client.request("GET", "/")
        #expect(index.status == 200)
        #expect(index.text.contains("/dashboard/app.js"))
        let policy = try #require(index.headers["content-security-policy"])
        #expect(policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'") && !policy.contains("unsafe-inline"))
        #expect(index.headers["x-content-type-options"] == "nosniff")
        #expect(try app.client.request("GET", "/dashboard/app.js").headers["content-type"]?.hasPrefix("text/javascript") == true)
        let chart = try app.client.request("GET", "/assets/chart.js/chart.mjs")
        #expect(chart.status == 200, "Chart.js comes from Debian's libjs-chart.js")
        // Each probe aims at a file that exists and has a served extension.
        #expect(try app.client.request("GET", "/openapi.yaml").status == 200)
        for path in ["/dashboard/../openapi.yaml", "/dashboard/%2e%2e/openapi.yaml", "/dashboard/..%2Fopenapi.yaml", "/dashboard/views/../../openapi.yaml",
                     "/assets/chart.js/../chart.js/chart.mjs", "/dashboard/.%2e/openapi.yaml"] {
            #expect(try app.client.request("GET", path).status == 404, "\(path)")
        }
    }

    @Test func aViewerSessionReadsButCannotChangeConfigEvenByReplayingRequests() throws {
        let app = try TestApplication()
        _ = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer", name: "qa")
        let admin = try app.addToken(role: "admin", name: "lead")
        let login = try app.client.postJSON("/v1/auth/login", token: nil, json: ["token": viewer])
        #expect(login.status == 200)
        let setCookie = try #require(login.headers["set-cookie"])
        #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"))
        let cookie = try #require(Self.cookie(from: login))
        let csrf = try #require(login.json["csrf_token"] as? String)
        #expect(try app.client.request("GET", "/v1/apps", headers: ["Cookie": cookie]).status == 200)
        let patch = Array(#"{"test_crash": true}"#.utf8)
        let path = "/v1/admin/apps/com.example.mail/config"
        #expect(try app.client.request("PATCH", path, headers: ["Cookie": cookie, "X-CSRF-Token": csrf], body: patch).status == 403, "viewer")
        #expect(try app.client.request("PATCH", path, headers: ["Cookie": cookie], body: patch).status == 403, "no CSRF token")

        let adminLogin = try app.client.postJSON("/v1/auth/login", token: nil, json: ["token": admin])
        let adminCookie = try #require(Self.cookie(from: adminLogin))
        let adminCSRF = try #require(adminLogin.json["csrf_token"] as? String)
        #expect(try app.client.request("PATCH", path, headers: ["Cookie": adminCookie], body: patch).status == 403, "cookie without CSRF token: refused")
        #expect(try app.client.request("PATCH", path, headers: ["Cookie": adminCookie, "X-CSRF-Token": csrf], body: patch).status == 403, "another session's token")
        let done = try app.client.request("PATCH", path, headers: ["Cookie": adminCookie, "X-CSRF-Token": adminCSRF], body: patch)
        #expect(done.status == 200)
        #expect(done.json["updated_by"] as? String == "lead")

        #expect(try app.client.request("POST", "/v1/auth/logout", headers: ["Cookie": adminCookie, "X-CSRF-Token": adminCSRF]).status == 204)
        #expect(try app.client.request("GET", "/v1/apps", headers: ["Cookie": adminCookie]).status == 401, "signed out")
        #expect(try app.client.request("POST", "/v1/auth/logout", headers: ["Cookie": cookie]).status == 403, "logout needs the CSRF token")
        #expect(try app.client.request("POST", "/v1/auth/logout", token: admin).status == 401, "logout ends a cookie session; a bearer token has none")
        #expect(try app.client.request("POST", "/v1/auth/links", headers: ["Cookie": cookie, "X-CSRF-Token": csrf]).status == 403,
                "a session cannot mint sign-in links that outlive it")
        #expect(try app.client.request("POST", "/v1/auth/login", headers: ["Content-Type": "text/plain"], body: Array(#"{"token": "x"}"#.utf8)).status == 415,
                "a cross-site form cannot post the JSON sign-in")
        #expect(try app.client.request("POST", "/v1/auth/login", headers: ["Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"],
                                          body: Array(try JSONSerialization.data(withJSONObject: ["token": viewer]))).status == 403)
        let ingest = try app.addApp("com.example.notes")
        #expect(try app.client.postJSON("/v1/auth/login", token: nil, json: ["token": ingest]).status == 403)
        #expect(try app.client.postJSON("/v1/auth/login", token: nil, json: ["token": "wdv_nope"]).status == 401)
    }

    /// What the link's page posts: its code and `next`, form-encoded, from the same origin.
    private static func submit(_ app: TestApplication, link: String, next: String? = nil, headers: [String: String] = ["Sec-Fetch-Site": "same-origin"]) throws -> TestResponse {
        let code = try #require(URLComponents(string: link)?.queryItems?.first { $0.name == "code" }?.value)
        var form = "code=\(code)"
        if let next { form += "&next=" + (next.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") }
        return try app.client.request("POST", "/login", headers: ["Content-Type": "application/x-www-form-urlencoded"].merging(headers) { $1 }, body: Array(form.utf8))
    }

    @Test func aSignInLinkWorksOnceAndOnlyRedirectsWithinTheServer() throws {
        let app = try TestApplication()
        let admin = try app.addToken(role: "admin")
        let link = try #require(try app.client.request("POST", "/v1/auth/links", token: admin).json["path"] as? String)
        let first = try Self.submit(app, link: link, next: "//evil.example/x")
        #expect(first.status == 303)
        #expect(first.headers["location"] == "/")
        for next in ["/\t/evil.example", "/\n/evil.example", "/\\evil.example", "https://evil.example", "/dashboard/../x"] {
            let path = try #require(try app.client.request("POST", "/v1/auth/links", token: admin).json["path"] as? String)
            #expect(try Self.submit(app, link: path, next: next).headers["location"] == "/", "\(next)")
        }
        let cookie = try #require(Self.cookie(from: first))
        #expect(try app.client.request("GET", "/v1/auth/session", headers: ["Cookie": cookie]).json["role"] as? String == "admin")
        #expect(try Self.submit(app, link: link).status == 401, "used up")
        let second = try #require(try app.client.request("POST", "/v1/auth/links", token: admin).json["path"] as? String)
        #expect(try Self.submit(app, link: second, next: "/#/compare?app=com.example.mail&base=14.1.0%20(31102)").headers["location"]
                == "/#/compare?app=com.example.mail&base=14.1.0%20(31102)")
    }

    /// Chat apps and mail scanners fetch links to preview them: opening the link shows a page
    /// that posts the code; only that post uses it up, and only from watchdogd's own page.
    @Test func fetchingASignInLinkDoesNotUseItUp() throws {
        let app = try TestApplication()
        let admin = try app.addToken(role: "admin")
        let link = try #require(try app.client.request("POST", "/v1/auth/links", token: admin).json["path"] as? String)
        for _ in 0..<3 {
            let page = try app.client.request("GET", link + "&next=/%23/releases%3F%22%3E%3Cscript%3E")
            #expect(page.status == 200 && page.headers["set-cookie"] == nil, "a preview gets the page, not a session")
            #expect(page.text.contains("<form id=sign-in method=post action=/login>") && page.text.contains("<script src=/dashboard/sign-in-link.js>"))
            #expect(!page.text.contains("\"><script>"), "next is escaped inside the form")
        }
        #expect(try app.client.request("GET", "/login?code=short").status == 401)
        #expect(try Self.submit(app, link: link, headers: ["Sec-Fetch-Site": "cross-site"]).status == 403, "another site cannot sign this browser in")
        #expect(try Self.submit(app, link: link, headers: ["Origin": "https://evil.example", "Host": "127.0.0.1:8080"]).status == 403)
        let form = try app.client.request("POST", "/login", headers: ["Content-Type": "application/json", "Sec-Fetch-Site": "same-origin"], body: Array("{}".utf8))
        #expect(form.status == 415)
        let used = try Self.submit(app, link: link)
        #expect(used.status == 303 && Self.cookie(from: used) != nil, "the refused posts did not spend the code")
        #expect(try Self.submit(app, link: link).status == 401)
    }

    /// `--cookie-secure` reaches the cookie through the settings, not a global: two
    /// applications in one process, one of each.
    @Test func theSessionCookieIsSecureOnlyWhenTheSettingSaysSo() throws {
        for secure in [false, true] {
            let app = try TestApplication { $0.cookieSecure = secure }
            let viewer = try app.addToken(role: "viewer")
            let login = try app.client.postJSON("/v1/auth/login", token: nil, json: ["token": viewer])
            #expect(login.status == 200)
            #expect(login.headers["set-cookie"]?.contains("; Secure") == secure, "cookieSecure \(secure)")
        }
    }
}
