import Foundation
import Testing
import WatchdogTesting

@Suite struct MetricsTests {
    @Test func metricsCountRequestsIngestOutcomesAndRateLimits() throws {
        let app = try TestApplication { $0.ingestRatePerKey = 2; $0.ingestBurstPerKey = 4 }
        let key = try app.addApp("com.example.mail")
        let good = try Fixtures.freshReport()
        var bad = try Fixtures.freshReport()
        bad["kind"] = "nonsense"
        #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": [good, bad]]).status == 202)
        #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": [good]]).json["duplicates"] as? Int == 1)
        for _ in 0..<6 { _ = try app.client.postJSON("/v1/reports", token: key, json: ["reports": [good]]) }
        _ = try app.client.request("GET", "/v1/nothing")
        let text = try app.client.request("GET", "/metrics").text
        func value(_ series: String) -> Double? {
            text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
        }
        #expect(value(#"watchdog_ingest_items_total{kind="reports",outcome="accepted"}"#) == 1)
        #expect((value(#"watchdog_ingest_items_total{kind="reports",outcome="duplicate"}"#) ?? 0) >= 1)
        #expect(value(#"watchdog_ingest_rejected_total{reason="invalid_field"}"#) == 1)
        #expect((value(#"watchdog_rate_limited_total{limit="ingest_key"}"#) ?? 0) >= 1)
        #expect((value(#"watchdog_http_requests_total{route="/v1/reports",method="POST",status="202"}"#) ?? 0) >= 2)
        #expect((value(#"watchdog_http_requests_total{route="/v1/reports",method="POST",status="429"}"#) ?? 0) >= 1)
        #expect(value(#"watchdog_http_requests_total{route="unmatched",method="GET",status="404"}"#) == 1)
        #expect(text.contains(#"watchdog_http_request_duration_seconds_bucket{route="/v1/reports""#))
        #expect(text.contains("watchdog_ingest_commit_items_count"))
        #expect((value("watchdog_database_bytes") ?? 0) > 0)
        #expect(value("watchdog_ingest_queue_depth") == 0)
    }

    @Test func aMetricsTokenIsRequiredWhenSet() throws {
        let app = try TestApplication { $0.metricsToken = "scrape-secret" }
        #expect(try app.client.request("GET", "/metrics").status == 401)
        #expect(try app.client.request("GET", "/metrics", token: "wrong").status == 401)
        #expect(try app.client.request("GET", "/metrics", token: "scrape-secret").status == 200)
    }
}

/// `/metrics` behind the documented reverse proxy: the client the proxy names decides.
@Suite struct MetricsBehindProxyTests {
    @Test func aForwardedRemoteClientIsNotLocal() throws {
        let app = try TestApplication { $0.trustedProxies = ["127.0.0.1"] }
        let remote = try app.client.request("GET", "/metrics", headers: ["X-Forwarded-For": "203.0.113.9"])
        #expect(remote.status == 403)
        #expect(remote.errorCode == "forbidden")
        // The proxy appends what it saw: a client cannot claim loopback in front of it.
        let spoofed = try app.client.request("GET", "/metrics", headers: ["X-Forwarded-For": "127.0.0.1, 203.0.113.9"])
        #expect(spoofed.status == 403)
        #expect(try app.client.request("GET", "/metrics", headers: ["X-Forwarded-For": "127.0.0.1"]).status == 200)
        // A scraper on the proxy's own machine, not going through it.
        #expect(try app.client.request("GET", "/metrics").status == 200)
    }
}
