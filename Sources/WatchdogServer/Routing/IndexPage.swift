import WatchdogHTTP

/// `GET /`: a plain page that points at the API until the dashboard lands.
enum IndexPage {
    static let response = HTTPResponse(
        status: 200,
        headers: [
            ("Content-Type", "text/html; charset=utf-8"),
            ("Content-Security-Policy", "default-src 'none'; style-src 'self'; frame-ancestors 'none'"),
            ("X-Content-Type-Options", "nosniff"),
        ],
        body: Array("""
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>watchdogd</title></head>
            <body>
            <h1>watchdogd</h1>
            <p>Keyboard-layout watchdog telemetry. The dashboard is not built yet; the API is live:</p>
            <ul>
            <li><code>GET /v1/apps</code> and <code>GET /v1/apps/{app}/releases</code> — release health (viewer token)</li>
            <li><code>POST /v1/reports</code>, <code>POST /v1/sessions</code> — ingest (ingest key)</li>
            <li><code>GET /v1/config?app=…</code> — effective remote config (ingest key)</li>
            <li><code>PATCH /v1/admin/apps/{app}/config</code> — change switches (admin token)</li>
            <li><code>GET /healthz</code>, <code>GET /readyz</code></li>
            </ul>
            <p>Send <code>Authorization: Bearer &lt;token&gt;</code>. See README.md and Resources/openapi.yaml.</p>
            </body></html>
            """.utf8)
    )
}
