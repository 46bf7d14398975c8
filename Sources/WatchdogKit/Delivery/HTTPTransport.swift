import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP exchange.
public struct TransportRequest: Sendable {
    /// `GET` or `POST`.
    public var method: String
    /// The full URL, query included.
    public var url: URL
    /// Request headers by name.
    public var headers: [String: String]
    /// The body (gzip-compressed JSON for uploads), if any.
    public var body: Data?
    /// Whether the request may use a network in Low Data Mode (`false` for the flush when the
    /// app goes to the background: `URLRequest.allowsConstrainedNetworkAccess` on iOS).
    public var allowsConstrainedNetworkAccess = true

    /// A request as WatchdogKit builds it.
    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// The answer to one `TransportRequest`.
public struct TransportResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// Header names lowercased.
    public var headers: [String: String]
    /// The body as received (empty when there was none).
    public var body: Data

    /// A response; `headers`' names should be lowercased.
    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// How WatchdogKit talks HTTP; `URLSessionTransport` in apps.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the server's answer, whatever its status; throws only when there is none (network error, timeout).
    func send(_ request: TransportRequest) async throws -> TransportResponse
}

/// `URLSession` without caching (WatchdogKit sends its own `If-None-Match`).
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession

    /// An ephemeral `URLSession` without a cache.
    ///
    /// - Parameter timeout: seconds a request may wait for data.
    public init(timeout: TimeInterval = 30) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
    }

    /// Sends `request` with a data task (`URLSession.data(for:)` is iOS 15).
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        #if os(iOS)
        urlRequest.allowsConstrainedNetworkAccess = request.allowsConstrainedNetworkAccess
        #endif
        // `URLSession.data(for:)` needs iOS 15; WatchdogKit supports iOS 13.
        let session = self.session
        let (data, response): (Data, URLResponse) = try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: urlRequest) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else if let response {
                    continuation.resume(returning: (data ?? Data(), response))
                } else {
                    continuation.resume(throwing: URLError(.badServerResponse))
                }
            }.resume()
        }
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return TransportResponse(status: http.statusCode, headers: headers, body: data)
    }
}
