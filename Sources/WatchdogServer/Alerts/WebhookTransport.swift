import CWebhookPost
import Dispatch
import Foundation
import Locking

/// Posts one webhook request and says how it went: Debian's libcurl, called directly
/// (`CWebhookPost`), so `https://` — a Slack incoming webhook — works with the system's CA
/// certificates. Redirects are not followed: a hook must name its endpoint.
///
/// A receiver is not trusted to behave, and libcurl enforces each limit inside its own
/// callbacks, where no byte is buffered past it: a 2xx is the answer as soon as its status
/// arrives (its body is not read), another status after `answerBytes` of its body, and the
/// connection is cut either way; every attempt ends `timeoutSeconds` after it started,
/// connection and TLS included, however slowly the receiver drips. (`URLSession` was measured
/// first: its completion handler buffers the whole body, and even a delegate cancelling at the
/// status let a busy machine read hundreds of megabytes of a 1 GiB answer before the cancel
/// took effect.) Blocking: called on the delivery workers' threads, several at once, never on
/// a request's.
final class WebhookTransport: Sendable {
    struct Outcome: Sendable, Equatable {
        /// The HTTP status, `nil` when there was no answer (refused, timed out, TLS failed).
        var status: Int?
        /// Why there was no answer; for an answer, the start of its body (what Slack says is wrong).
        var error: String?
        var milliseconds: Int
    }

    /// Bytes of an answer's body read at most (4 KiB: Slack's errors are a few words); the
    /// rest is never downloaded.
    static let answerBytes = 4096

    let timeoutSeconds: Double
    /// The cancel flags of the requests in flight, and whether `cancel` was called (then no
    /// request starts). A flag is watched by libcurl's progress callback, at least once a second.
    private let current = Locked<(flags: [UnsafeMutablePointer<Int32>], cancelled: Bool)>(([], false))

    /// libcurl is loaded by the first `post` (`CWebhookPost`), not here: a daemon without hooks
    /// never maps it.
    init(timeoutSeconds: Double = 10) {
        self.timeoutSeconds = timeoutSeconds
    }

    /// Runs `body` with a cancel flag `cancel` can set; `nil` once `cancel` was called.
    private func withCancelFlag<T>(_ body: (UnsafeMutablePointer<Int32>) -> T) -> T? {
        let flag = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        flag.initialize(to: 0)
        defer { flag.deallocate() }
        guard current.withLock({ current -> Bool in
            guard !current.cancelled else { return false }
            current.flags.append(flag)
            return true
        }) else { return nil }
        defer { current.withLock { $0.flags.removeAll { $0 == flag } } }
        return body(flag)
    }

    /// Sends one e-mail (`EmailMessage`) through `smtp` with the same deadline and cancel as a
    /// POST: the outcome's status is the server's last SMTP reply (250) when it was accepted.
    func sendMail(_ smtp: SMTPSettings, recipients: [String], message: [UInt8]) -> Outcome {
        withCancelFlag { flag -> Outcome in
            let startedAt = DispatchTime.now().uptimeNanoseconds
            var result = webhook_post_result()
            let lines = recipients.map { "<\($0)>" }.joined(separator: "\n")
            message.withUnsafeBufferPointer { message in
                smtp_send(smtp.url, smtp.caFile ?? "", smtp.username ?? "", smtp.password ?? "", "<\(smtp.sender)>", lines,
                          message.baseAddress, message.count, Int(timeoutSeconds * 1000), flag, &result)
            }
            let milliseconds = Int((DispatchTime.now().uptimeNanoseconds - startedAt) / 1_000_000)
            let error = withUnsafeBytes(of: result.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            return Outcome(status: result.status > 0 ? result.status : nil, error: error.isEmpty ? nil : error, milliseconds: milliseconds)
        } ?? Outcome(status: nil, error: "cancelled: watchdogd is stopping", milliseconds: 0)
    }

    func post(_ url: URL, headers: [(name: String, value: String)], body: [UInt8]) -> Outcome {
        withCancelFlag { flag in post(url, headers: headers, body: body, flag: flag) }
            ?? Outcome(status: nil, error: "cancelled: watchdogd is stopping", milliseconds: 0)
    }

    private func post(_ url: URL, headers: [(name: String, value: String)], body: [UInt8], flag: UnsafeMutablePointer<Int32>) -> Outcome {
        let startedAt = DispatchTime.now().uptimeNanoseconds
        // Header values are ours (ids, a timestamp, a signature): no line breaks in them.
        let lines = headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
        var answer = [UInt8](repeating: 0, count: Self.answerBytes)
        var result = webhook_post_result()
        answer.withUnsafeMutableBufferPointer { answer in
            body.withUnsafeBufferPointer { body in
                webhook_post(url.absoluteString, lines, body.baseAddress, body.count, Int(timeoutSeconds * 1000),
                             answer.baseAddress, answer.count, flag, &result)
            }
        }
        let milliseconds = Int((DispatchTime.now().uptimeNanoseconds - startedAt) / 1_000_000)
        guard result.status > 0 else {
            let error = withUnsafeBytes(of: result.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            return Outcome(status: nil, error: error.isEmpty ? "no answer" : error, milliseconds: milliseconds)
        }
        let text = String(decoding: answer.prefix(min(result.answer_length, 200)), as: UTF8.self).unicodeScalars
            .map { $0.properties.generalCategory == .control ? " " : String($0) }.joined()
        return Outcome(status: result.status, error: text.isEmpty ? nil : text, milliseconds: milliseconds)
    }

    /// Cuts the requests in flight short, and refuses every later one (shutdown).
    func cancel() {
        current.withLock { current in
            current.cancelled = true
            for flag in current.flags { webhook_post_cancel(flag) }
        }
    }
}
