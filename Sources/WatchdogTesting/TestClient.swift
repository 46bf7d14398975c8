import Foundation
import Locking
import WatchdogHTTP
import WatchdogServer

/// A response as the router gave it, with a streamed body read to its end.
public struct TestResponse: Sendable {
    public var status: Int
    /// Names lowercased; a repeated header keeps its last value (`Set-Cookie` is sent once).
    public var headers: [String: String]
    public var body: [UInt8]
    /// Whether the body was a stream (`HTTPResponse.stream`: chunked on the wire).
    public var streamed = false

    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object.
    public var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }

    public var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
    public var errorMessage: String? { (json["error"] as? [String: Any])?["message"] as? String }
}

public struct TestClientError: Error, CustomStringConvertible {
    public var description: String
}

/// Sends requests to a `WatchdogApplication` in memory, shaped as libmicrohttpd hands them
/// over: path and query split and percent-decoded, header names case-insensitive. What the HTTP
/// layer itself does (gzip bodies, body and header limits, framing) is not here: the live
/// tests in `WatchdogdTests` cover it.
public struct TestClient: Sendable {
    let application: WatchdogApplication
    let clientAddress: String
    /// How long a response promised for later (ingest waits for the writer's commit) may take.
    public var timeoutSeconds: Double = 30

    public func request(_ method: String, _ path: String, token: String? = nil, headers: [String: String] = [:], body: [UInt8] = []) throws -> TestResponse {
        var fields = headers.map { ($0.key, $0.value) }
        if let token { fields.append(("Authorization", "Bearer \(token)")) }
        let (path, query) = Self.split(path)
        let request = HTTPRequest(method: method, path: path, query: query, headers: HTTPHeaders(fields), body: body, clientAddress: clientAddress)
        return try send(request)
    }

    public func postJSON(_ path: String, token: String?, json: Any, headers: [String: String] = [:]) throws -> TestResponse {
        let data = Array(try JSONSerialization.data(withJSONObject: json))
        return try request("POST", path, token: token, headers: ["Content-Type": "application/json"].merging(headers) { $1 }, body: data)
    }

    /// Hands the request to the router and awaits its response without blocking a thread.
    public func send(_ request: HTTPRequest) async throws -> TestResponse {
        let response = await withCheckedContinuation { continuation in
            application.respond(to: request).whenReady { continuation.resume(returning: $0) }
        }
        return try Self.read(response, method: request.method)
    }

    /// Hands the request to the router and waits (bounded) for its response.
    public func send(_ request: HTTPRequest) throws -> TestResponse {
        let answer = Locked<HTTPResponse?>(nil)
        let done = DispatchSemaphore(value: 0)
        application.respond(to: request).whenReady { response in
            answer.withLock { $0 = response }
            done.signal()
        }
        guard done.wait(timeout: .now() + timeoutSeconds) == .success, let response = answer.withLock({ $0 }) else {
            throw TestClientError(description: "\(request.method) \(request.path) got no response within \(timeoutSeconds) s")
        }
        return try Self.read(response, method: request.method)
    }

    /// The response as a client reads it: a streamed body to its end, none for `HEAD`.
    static func read(_ response: HTTPResponse, method: String) throws -> TestResponse {
        var body = response.body
        if let stream = response.stream {
            body = []
            while let chunk = try stream.nextChunk() { body += chunk }
        }
        var headers: [String: String] = [:]
        for (name, value) in response.headers { headers[name.lowercased()] = value }
        return TestResponse(status: response.status, headers: headers, body: method == "HEAD" ? [] : body, streamed: response.stream != nil)
    }

    /// The path and its query arguments, decoded as libmicrohttpd does (`+` is a space).
    static func split(_ target: String) -> (String, [String: String]) {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = String(parts[0]).removingPercentEncoding ?? String(parts[0])
        var query: [String: String] = [:]
        if parts.count > 1 {
            for pair in parts[1].split(separator: "&") {
                let nameValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                func decode(_ text: Substring) -> String { String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text) }
                query[decode(nameValue[0])] = nameValue.count > 1 ? decode(nameValue[1]) : ""
            }
        }
        return (path, query)
    }
}
