/// What a request says before its body: enough to route and authenticate it.
public struct HTTPRequestHead: Sendable {
    public var method: String
    /// The path without the query, percent-decoded by libmicrohttpd.
    public var path: String
    public var query: [String: String]
    public var headers: HTTPHeaders
    /// The peer's IP address as text.
    public var clientAddress: String

    /// The head as a request without a body (for code that takes an `HTTPRequest`).
    public var request: HTTPRequest {
        HTTPRequest(method: method, path: path, query: query, headers: headers, body: [], clientAddress: clientAddress)
    }
}

/// The application's decision on a request that announced a body, taken on its headers alone,
/// before any byte of the body is buffered.
public enum HTTPAdmission: Sendable {
    /// Receive the body, counting its bytes against `budgetKey` (the client: an address, or the
    /// one a trusted proxy names) in the per-client buffered-body budget.
    case accept(budgetKey: String)
    /// Answer now (an unknown route, a wrong method, no credentials); the body is not read and
    /// the connection is closed after the answer.
    case refuse(HTTPResponse)
}
