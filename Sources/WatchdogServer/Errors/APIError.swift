import Foundation
import WatchdogHTTP
import WatchdogWire

/// Every failure an HTTP client can see, rendered in one place as
/// `{"error": {"code": ..., "message": ...}}` with its status (docs/api.md, "Errors").
public struct APIError: Error, Sendable {
    public var status: Int
    public var code: String
    public var message: String
    public var headers: [(name: String, value: String)] = []

    public init(status: Int, code: String, message: String, headers: [(name: String, value: String)] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    /// The response for this error.
    public var response: HTTPResponse {
        let body = (try? JSONBody.encode(ErrorResponse(error: ErrorDetail(code: code, message: message)))) ?? []
        return JSONBody.response(status: status, bytes: body, extraHeaders: headers)
    }

    static func badRequest(_ code: String, _ message: String) -> APIError {
        APIError(status: 400, code: code, message: message)
    }

    static func from(_ detail: ErrorDetail) -> APIError {
        APIError(status: 400, code: detail.code, message: detail.message)
    }

    static let unauthorized = APIError(
        status: 401, code: "unauthorized",
        message: "missing or unknown credentials: send Authorization: Bearer <token>",
        headers: [("WWW-Authenticate", "Bearer realm=\"watchdogd\"")]
    )

    static func forbidden(_ message: String) -> APIError {
        APIError(status: 403, code: "forbidden", message: message)
    }

    static func notFound(_ message: String) -> APIError {
        APIError(status: 404, code: "not_found", message: message)
    }

    static func methodNotAllowed(_ method: String, allowed: [String]) -> APIError {
        APIError(status: 405, code: "method_not_allowed",
                 message: "\(method) is not allowed here; use \(allowed.joined(separator: " or "))",
                 headers: [("Allow", allowed.joined(separator: ", "))])
    }

    static func unsupportedMediaType(_ contentType: String) -> APIError {
        APIError(status: 415, code: "unsupported_media_type",
                 message: "Content-Type \(contentType) is not accepted; send application/json (optionally with Content-Encoding: gzip)")
    }

    static func overloaded(_ message: String) -> APIError {
        APIError(status: 503, code: "overloaded", message: message, headers: [("Retry-After", "1")])
    }

    static func unavailable(_ message: String) -> APIError {
        APIError(status: 503, code: "store_unavailable", message: message, headers: [("Retry-After", "5")])
    }

    static let internalError = APIError(status: 500, code: "internal_error", message: "the server failed to handle the request; it was logged")

    /// The error for a failure detected by the HTTP layer.
    static func from(_ error: HTTPLayerError) -> APIError {
        switch error {
        case .payloadTooLarge(let limit, let decompressed):
            APIError(status: 413, code: "payload_too_large",
                     message: "the body is larger than \(limit) bytes\(decompressed ? " after gzip decompression" : ""); send at most \(Limits.itemsPerBatch) items and \(limit) bytes per request")
        case .unsupportedContentEncoding(let encoding):
            APIError(status: 415, code: "unsupported_content_encoding",
                     message: "Content-Encoding \(encoding) is not accepted; use gzip or none")
        case .malformedContentEncoding(let reason):
            APIError(status: 400, code: "invalid_gzip", message: "the body is not valid gzip: \(reason)")
        case .shuttingDown:
            APIError(status: 503, code: "shutting_down", message: "the server is shutting down; retry shortly", headers: [("Retry-After", "2")])
        case .bodyMemoryExhausted:
            APIError.overloaded("the server is receiving too many bodies at once; retry after a second")
        case .ambiguousFraming(let reason):
            APIError(status: 400, code: "ambiguous_framing",
                     message: "the body's length is ambiguous (\(reason)); send one Content-Length or Transfer-Encoding: chunked, not both")
        case .responseRejected:
            APIError.internalError
        case .unsupportedTransferEncoding(let coding):
            APIError(status: 501, code: "unsupported_transfer_encoding",
                     message: "Transfer-Encoding \(coding) is not supported; send Content-Length or Transfer-Encoding: chunked (Content-Encoding: gzip compresses)")
        }
    }
}
