import Foundation
import WatchdogHTTP

/// JSON responses with the headers every API answer carries.
enum JSONBody {
    static let commonHeaders: [(name: String, value: String)] = [
        ("Content-Type", "application/json; charset=utf-8"),
        ("X-Content-Type-Options", "nosniff"),
        ("Cache-Control", "no-store"),
    ]

    static func response(status: Int, bytes: [UInt8], extraHeaders: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: commonHeaders + extraHeaders, body: bytes)
    }

    static func response<Body: Encodable>(status: Int = 200, _ body: Body, extraHeaders: [(name: String, value: String)] = []) -> HTTPResponse {
        do {
            return response(status: status, bytes: try encode(body), extraHeaders: extraHeaders)
        } catch {
            return APIError.internalError.response
        }
    }

    /// A view written by `JSONWriter` instead of `JSONEncoder`: the same bytes, for the large
    /// stats views. A NaN or infinity is an internal error, as `JSONEncoder` makes it.
    static func response(status: Int = 200, writing body: some JSONWritable, extraHeaders: [(name: String, value: String)] = []) -> HTTPResponse {
        var json = JSONWriter()
        body.write(to: &json)
        guard !json.wroteNonFiniteNumber else { return APIError.internalError.response }
        return response(status: status, bytes: json.bytes, extraHeaders: extraHeaders)
    }

    static func encode<Body: Encodable>(_ body: Body) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(body))
    }
}
