/// What the server sends back: a body in memory, or a stream sent in chunks as the client
/// reads it (constant memory for large exports).
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// When set, the body is this stream (chunked transfer encoding) and `body` is ignored.
    public var stream: (any HTTPBodyStream)?

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public init(status: Int, headers: [(name: String, value: String)] = [], stream: any HTTPBodyStream) {
        self.status = status
        self.headers = headers
        self.body = []
        self.stream = stream
    }
}

/// A body produced piece by piece, pulled by libmicrohttpd as the socket drains.
/// `nextChunk` is called on one of libmicrohttpd's threads, one call at a time.
public protocol HTTPBodyStream: AnyObject, Sendable {
    /// The next bytes; an empty array is allowed; `nil` at the end.
    func nextChunk() throws -> [UInt8]?
}

/// Failures the HTTP layer detects before a request reaches the application; the application
/// renders them (see `HTTPServerConfiguration.renderError`) so every error has one shape.
public enum HTTPLayerError: Error, Sendable, Equatable {
    /// The body, as sent or after decompression, is larger than the limit in bytes.
    case payloadTooLarge(limit: Int, decompressed: Bool)
    /// `Content-Encoding` names an encoding the server does not accept.
    case unsupportedContentEncoding(String)
    /// The body does not decode with its `Content-Encoding`.
    case malformedContentEncoding(String)
    /// The server is stopping and takes no new requests.
    case shuttingDown
    /// The request waited longer than allowed (`maxBodyWaitSeconds`) for the memory its body
    /// needs; the body is not read and the connection is closed after the answer.
    case bodyMemoryExhausted
    /// The body's length can be read more than one way (`Content-Length` with
    /// `Transfer-Encoding`, repeated lengths); the connection is closed after the answer.
    case ambiguousFraming(String)
    /// `Transfer-Encoding` names a coding other than `chunked`; the connection is closed after
    /// the answer (RFC 9112 §6.1: 501).
    case unsupportedTransferEncoding(String)
    /// libmicrohttpd refused to build the handler's response (a header value with a line break,
    /// no memory); the reason was logged. Answered with 500 on a connection then closed.
    case responseRejected(String)
}
