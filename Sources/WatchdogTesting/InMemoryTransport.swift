import Foundation
import Gzip
import WatchdogHTTP
import WatchdogKit
import WatchdogWire

/// WatchdogKit's `HTTPTransport` straight into a `TestApplication`: an agent or uploader
/// delivers to the real router and store with no socket between them. Standing in for the
/// HTTP layer, it inflates WatchdogKit's gzip bodies with the same `Gzip.decompress` and cap.
///
/// ```swift
/// let uploader = Uploader(outbox: outbox, endpoint: TestApplication.endpoint, ingestKey: key, transport: app.transport, ...)
/// ```
public struct InMemoryTransport: HTTPTransport {
    let client: TestClient

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        let target = (components?.percentEncodedPath ?? "/") + (components?.percentEncodedQuery.map { "?" + $0 } ?? "")
        components = nil
        let (path, query) = TestClient.split(target)
        var body = request.body.map(Array.init) ?? []
        var headers = request.headers
        if let encoding = headers.first(where: { $0.key.lowercased() == "content-encoding" }) {
            guard encoding.value.lowercased() == "gzip" else { throw TestClientError(description: "WatchdogKit sent Content-Encoding \(encoding.value)") }
            body = try Gzip.decompress(body, limit: Limits.bodyBytes)
            headers[encoding.key] = nil
        }
        let http = HTTPRequest(method: request.method, path: path, query: query, headers: HTTPHeaders(headers.map { ($0.key, $0.value) }),
                               body: body, clientAddress: client.clientAddress)
        let response = try await client.send(http)
        return TransportResponse(status: response.status, headers: response.headers, body: Data(response.body))
    }
}

extension TestApplication {
    /// The URL an in-memory agent is configured with; only its path matters.
    public static let endpoint = URL(string: "http://watchdog.test")!

    /// A transport for WatchdogKit that calls this application in memory.
    public var transport: InMemoryTransport { InMemoryTransport(client: client) }
}
