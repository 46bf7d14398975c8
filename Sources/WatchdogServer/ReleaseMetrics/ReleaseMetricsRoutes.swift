import Foundation
import Prometheus
import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// `GET /v1/metrics/releases[?releases=N]`: release health in the Prometheus text format, for
/// Grafana (deploy/grafana/). A viewer-authenticated endpoint beside `/metrics`, not inside it:
/// `/metrics` describes the server to whoever runs it (loopback or `--metrics-token`, every
/// app's traffic alike), while these figures are per app and a viewer sees only their apps'.
///
/// Bounded by what no client can add: the apps (made by admins) the caller sees, times the
/// newest `releases` listed releases of each (default 10, at most 50; listing is declaration or
/// admission), times the built-in report kinds (an app's own `x-` kinds are summed as
/// `kind="x-*"`). Each scrape builds a fresh registry, so a release that leaves the window
/// leaves the output.
struct ReleaseMetricsRoutes: Sendable {
    let store: any TelemetryStore
    let lookup: ReleaseLookup

    /// Listed releases per app a scrape shows when `releases=` is absent, and at most.
    static let defaultReleases = 10
    static let maximumReleases = 50

    func render(_ request: HTTPRequest, principal: Principal) throws(APIError) -> HTTPResponse {
        let count = try Self.releaseCount(request.query["releases"])
        let apps = try storeCall { try store.apps() }.map(\.app).filter { principal.sees($0) }.sorted()
        let exposition = ReleaseMetricsExposition()
        for app in apps {
            let releases = try lookup.releases(of: app)
            let sorted = ReleaseOrder.sorted(releases, newestFirst: true, by: \.release)
            guard !sorted.isEmpty else { continue }
            let reach = try ReleaseReach.of(app: app, lookup: lookup)
            for (position, release) in sorted.prefix(count).enumerated() {
                exposition.add(app: app, release: release)
                guard release.sessions > 0, let base = reach.predecessor(of: release.release, amongOlderNewestFirst: sorted[(position + 1)...]) else {
                    exposition.addVerdict(app: app, release: release.release.text, against: nil, comparison: nil)
                    continue
                }
                let view = try CompareRoutes.comparison(lookup, app: app, base: base, target: release, method: .sequential)
                exposition.addVerdict(app: app, release: release.release.text, against: base.release.text, comparison: view.overall)
            }
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8"), ("Cache-Control", "no-store")],
                            body: exposition.bytes())
    }

    /// `releases=`: a whole number from 1 to `maximumReleases`.
    static func releaseCount(_ text: String?) throws(APIError) -> Int {
        guard let text else { return defaultReleases }
        guard let count = Int(text), (1...maximumReleases).contains(count) else {
            throw .badRequest("invalid_parameter", "releases must be a whole number from 1 to \(maximumReleases) (listed releases per app, newest first), got \(text.prefix(20))")
        }
        return count
    }
}
