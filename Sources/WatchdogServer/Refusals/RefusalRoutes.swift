import WatchdogHTTP
import WatchdogStore

/// `GET /v1/admin/apps/{app}/attestation/refusals`: the app's refused attestations and uploads
/// of the last 24 hours by code (`RefusalCounter`), for the attestation card.
struct RefusalRoutes: Sendable {
    let refusals: RefusalCounter
    let store: any TelemetryStore

    func lastDay(app: String) throws(APIError) -> HTTPResponse {
        guard try storeCall({ try store.appExists(app) }) else { throw .notFound("no app \(app)") }
        let (since, counts) = try storeCall { try refusals.lastDay(app: app) }
        return JSONBody.response(RefusalsView(app: app, since: since, refusals: counts.map { RefusalsView.Code(kind: $0.kind, code: $0.code, count: $0.count) }))
    }
}

struct RefusalsView: Encodable {
    var app: String
    /// The start of the first hour counted (RFC 3339): this hour and the 23 before.
    @ISOTime var since: Int64
    var refusals: [Code]

    struct Code: Encodable {
        /// `attestation`, `upload` or `would_refuse` (stored under `observe` without an assertion).
        var kind: String
        var code: String
        var count: Int
    }
}
