import CWebhookPost
import Foundation

/// Why an OpenID Connect sign-in could not complete: the provider could not be reached or
/// answered nonsense, or it refused (an expired or replayed code), or its ID token was refused.
enum OIDCFailure: Error, Equatable, CustomStringConvertible {
    case provider(String)
    case token(IDTokenRefusal)

    var description: String {
        switch self {
        case .provider(let reason): return reason
        case .token(let refusal): return refusal.description
        }
    }
}

/// The provider's endpoints over libcurl (`CWebhookPost`, as webhooks): each request ends within
/// `timeoutMilliseconds`, its answer is read up to `answerBytes`, redirects are not followed.
enum OIDCHTTP {
    static let timeoutMilliseconds = 5_000
    /// Discovery documents, JWKS and token answers are a few KiB.
    static let answerBytes = 256 * 1024

    /// A GET (`body` nil) or a form POST; the status and body, or why there is none.
    static func send(_ url: String, headers: [String] = [], form: [(String, String)]? = nil) throws(OIDCFailure) -> (status: Int, body: [UInt8]) {
        var answer = [UInt8](repeating: 0, count: answerBytes)
        var result = webhook_post_result()
        var cancel: Int32 = 0
        let body = form.map { Array(formEncoded($0).utf8) }
        var lines = ["Accept: application/json"] + headers
        if body != nil { lines.append("Content-Type: application/x-www-form-urlencoded") }
        let payload = (body ?? []) + [0]
        answer.withUnsafeMutableBufferPointer { answer in
            payload.withUnsafeBufferPointer { payload in
                http_request(url, lines.joined(separator: "\n"), body == nil ? nil : payload.baseAddress, payload.count - 1, timeoutMilliseconds,
                             answer.baseAddress, answer.count, &cancel, &result)
            }
        }
        let error = withUnsafeBytes(of: result.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard result.status != 0 else { throw .provider("no answer from \(url): \(error)") }
        guard result.truncated == 0 else { throw .provider("the answer from \(url) is over \(answerBytes / 1024) KiB") }
        return (Int(result.status), Array(answer.prefix(result.answer_length)))
    }

    /// `application/x-www-form-urlencoded` (RFC 6749 appendix B).
    static func formEncoded(_ fields: [(String, String)]) -> String {
        fields.map { "\(formComponent($0.0))=\(formComponent($0.1))" }.joined(separator: "&")
    }

    static func formComponent(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// A JSON object answer.
    static func json(_ bytes: [UInt8], from what: String) throws(OIDCFailure) -> [String: Any] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw .provider("the provider's \(what) is not a JSON object")
        }
        return object
    }

    /// Whether `url` may be used for the provider: https, or http to this machine (a provider on
    /// loopback, in tests or beside watchdogd).
    static func isAcceptable(_ url: String) -> Bool {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(), let host = components.host, !host.isEmpty,
              components.user == nil, components.password == nil else { return false }
        if scheme == "https" { return true }
        return scheme == "http" && ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host.lowercased())
    }
}
