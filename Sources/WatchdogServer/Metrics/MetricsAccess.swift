import Foundation
import WatchdogHTTP
import WatchdogStore

/// Who may scrape `GET /metrics`: the holder of `--metrics-token`, or, without one, only
/// clients on this machine (loopback). Behind a `--trusted-proxy` the client is the one the
/// proxy names in `X-Forwarded-For`, as for the rate limits: the proxy's own loopback socket
/// would otherwise make every client on the internet local.
struct MetricsAccess: Sendable {
    let token: String?
    let trustedProxies: Set<String>

    func render(_ request: HTTPRequest, metrics: ServerMetrics, queue: IngestQueue, store: any TelemetryStore) throws(APIError) -> HTTPResponse {
        if let token {
            let sent = request.headers["authorization"].map { String($0.dropFirst("Bearer ".count)) } ?? ""
            guard request.headers["authorization"]?.hasPrefix("Bearer ") == true, constantTimeEquals(Array(sent.utf8), Array(token.utf8)) else {
                throw .unauthorized
            }
        } else {
            // A proxied request whose client the proxy did not name is nobody's: not local.
            let origin = IngestRoutes.origin(of: request, trusting: trustedProxies)
            let client: String? = switch origin {
            case .direct(let address), .forwarded(let address): address
            case .unparsable: nil
            }
            guard let client, ["127.0.0.1", "::1", "::ffff:127.0.0.1"].contains(client) else {
                throw .forbidden("metrics are served to loopback clients only; set --metrics-token to scrape from elsewhere")
            }
        }
        metrics.queueDepth.set(to: Double(queue.depth))
        if let sqlite = store as? SQLiteStore {
            let size = [sqlite.path, sqlite.path + "-wal"].compactMap { try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int }.reduce(0, +)
            metrics.databaseBytes.set(to: Double(size))
        } else if let postgres = store as? PostgresStore, let size = try? postgres.databaseSize() {
            metrics.databaseBytes.set(to: Double(size))
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8"), ("Cache-Control", "no-store")],
                            body: metrics.registry.emitToBuffer())
    }
}
