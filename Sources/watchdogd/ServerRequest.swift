import CWebhookPost
import Foundation

/// One request of the CLI to a running server (`watchdogd gate`, `watchdogd rollouts`) over
/// libcurl (`CWebhookPost`, loaded on first use, as for webhooks): no FoundationNetworking, whose
/// library would load libcurl and its TLS stack into every `watchdogd` process, the daemon's too.
enum ServerRequest {
    /// Why there is no answer to read.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Bytes of an answer read at most: a server's JSON answers are far smaller.
    static let answerBytes = 1 << 20

    /// A GET (`body` nil) or a POST of `body`; the status and the answer's body, or why there is
    /// none (no answer, or one over `answerBytes`).
    static func send(_ url: String, headers: String, body: [UInt8]? = nil, timeoutMilliseconds: Int) -> Result<(status: Int, body: Data), Failure> {
        var answer = [UInt8](repeating: 0, count: answerBytes)
        var result = webhook_post_result()
        var cancel: Int32 = 0
        // One byte more, so that an empty POST still passes a pointer (NULL means GET).
        let payload = (body ?? []) + [0]
        answer.withUnsafeMutableBufferPointer { answer in
            payload.withUnsafeBufferPointer { payload in
                http_request(url, headers, body == nil ? nil : payload.baseAddress, payload.count - 1, timeoutMilliseconds,
                             answer.baseAddress, answer.count, &cancel, &result)
            }
        }
        let error = withUnsafeBytes(of: result.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard result.status != 0 else { return .failure(Failure(description: error.isEmpty ? "no answer from \(url)" : error)) }
        guard result.truncated == 0 else { return .failure(Failure(description: "the answer from \(url) is over 1 MiB; is it watchdogd?")) }
        return .success((result.status, Data(answer.prefix(result.answer_length))))
    }
}
