import WatchdogHTTP
import WatchdogStore

/// `GET /v1/admin/apps/{app}/attestation/refusals`: the app's refused attestations and uploads
/// of the last 24 hours by code (`RefusalCounter`), for the attestation card; and the session
/// starts of the same hours per listed release with those attested, for the Require dialog.
struct RefusalRoutes: Sendable {
    let refusals: RefusalCounter
    let store: any TelemetryStore

    func lastDay(app: String) throws(APIError) -> HTTPResponse {
        guard try storeCall({ try store.appExists(app) }) else { throw .notFound("no app \(app)") }
        let (since, counts) = try storeCall { try refusals.lastDay(app: app) }
        // The listed releases with the most sessions of the 24 hours first.
        let sessions = try storeCall { try store.sessionsByRelease(app: app, fromHour: since / 3_600_000, limit: Self.shownReleases) }
        return JSONBody.response(RefusalsView(app: app, since: since, refusals: counts.map { RefusalsView.Code(kind: $0.kind, code: $0.code, count: $0.count) },
                                              sessionsByRelease: sessions.map { RefusalsView.ReleaseSessions($0) }))
    }

    /// Listed releases answered at most.
    static let shownReleases = 20
}

struct RefusalsView: Encodable {
    var app: String
    /// The start of the first hour counted (RFC 3339): this hour and the 23 before.
    @ISOTime var since: Int64
    var refusals: [Code]
    /// Per listed release (at most 20, the most sessions first), the counted session starts dated
    /// in the same hours and those attested: under `require`, the others' uploads are refused.
    var sessionsByRelease: [ReleaseSessions]

    enum CodingKeys: String, CodingKey {
        case app, since, refusals
        case sessionsByRelease = "sessions_by_release"
    }

    struct ReleaseSessions: Encodable {
        var release: String
        var id: String
        var sessions: Int
        var attestedSessions: Int

        init(_ row: ReleaseSessionsRow) {
            release = row.release.text
            id = row.release.id
            sessions = row.sessions
            attestedSessions = min(row.attestedSessions, row.sessions)
        }

        enum CodingKeys: String, CodingKey {
            case release, id, sessions
            case attestedSessions = "attested_sessions"
        }
    }

    struct Code: Encodable {
        /// `attestation`, `upload` or `would_refuse` (stored under `observe` without an assertion).
        var kind: String
        var code: String
        var count: Int
    }
}
