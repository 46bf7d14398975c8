import CMicroHTTPD

/// A response built once into libmicrohttpd's form and queued any number of times, on any
/// thread: libmicrohttpd counts its references, and the body and headers are copied once
/// instead of per request. For answers that are the same for many clients (an effective
/// config and its `304`).
public final class PreparedResponse: @unchecked Sendable {
    /// What is sent: status, headers and body.
    public let response: HTTPResponse
    /// libmicrohttpd's response; only ever read after `init`, released in `deinit`.
    let pointer: OpaquePointer

    /// `nil` for a streamed response, or when libmicrohttpd refuses a header (a line break in
    /// a value) or has no memory: the caller answers the ordinary way, which reports it.
    public init?(_ response: HTTPResponse) {
        guard response.stream == nil, let built = try? Callbacks.buffered(response) else { return nil }
        self.response = response
        pointer = built
    }

    deinit {
        MHD_destroy_response(pointer)
    }
}
