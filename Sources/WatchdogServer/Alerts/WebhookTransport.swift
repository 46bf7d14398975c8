import Dispatch
import Foundation
import Locking
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Posts one webhook request and says how it went: Foundation's `URLSession` (on Linux
/// swift-corelibs-foundation over libcurl, so `https://` — a Slack incoming webhook — works
/// with the system's CA certificates). Redirects are not followed: a hook must name its
/// endpoint. Blocking: called only on the alert worker's thread, never on a request's.
final class WebhookTransport: Sendable {
    struct Outcome: Sendable, Equatable {
        /// The HTTP status, `nil` when there was no answer (refused, timed out, TLS failed).
        var status: Int?
        /// Why there was no answer; for an answer, the start of its body (what Slack says is wrong).
        var error: String?
        var milliseconds: Int
    }

    private let session: URLSession
    let timeoutSeconds: Double
    /// The request in flight, and whether `cancel` was called (then no request starts).
    private let current = Locked<(task: URLSessionDataTask?, cancelled: Bool)>((nil, false))

    init(timeoutSeconds: Double = 10) {
        self.timeoutSeconds = timeoutSeconds
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeoutSeconds
        configuration.timeoutIntervalForResource = timeoutSeconds
        configuration.httpMaximumConnectionsPerHost = 2
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }

    func post(_ url: URL, headers: [(name: String, value: String)], body: [UInt8]) -> Outcome {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeoutSeconds)
        request.httpMethod = "POST"
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = Data(body)
        let startedAt = DispatchTime.now().uptimeNanoseconds
        let result = Locked<(status: Int?, error: String?)?>(nil)
        let done = DispatchSemaphore(value: 0)
        let handler: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { data, response, error in
            let status = (response as? HTTPURLResponse)?.statusCode
            let answer = String(decoding: (data ?? Data()).prefix(200), as: UTF8.self).unicodeScalars
                .map { $0.properties.generalCategory == .control ? " " : String($0) }.joined()
            let failure = status == nil ? (error?.localizedDescription ?? "no answer") : (answer.isEmpty ? nil : answer)
            result.withLock { outcome in outcome = outcome ?? (status, failure) }
            done.signal()
        }
        // Created and started under the lock `cancel` takes: after it, no task starts (and none
        // is made on a session `invalidate` ended).
        let task = current.withLock { current -> URLSessionDataTask? in
            guard !current.cancelled else { return nil }
            let task = session.dataTask(with: request, completionHandler: handler)
            current.task = task
            task.resume()
            return task
        }
        guard let task else { return Outcome(status: nil, error: "cancelled: watchdogd is stopping", milliseconds: 0) }
        defer { current.withLock { $0.task = nil } }
        // The session's own timeout ends the task; this bound only keeps a stuck task from
        // holding the worker forever.
        if done.wait(timeout: .now() + timeoutSeconds + 5) == .timedOut {
            task.cancel()
            let failure = "no answer within \(Int(timeoutSeconds)) s"
            result.withLock { outcome in outcome = outcome ?? (nil, failure) }
        }
        let milliseconds = Int((DispatchTime.now().uptimeNanoseconds - startedAt) / 1_000_000)
        let (status, error) = result.withLock { $0 } ?? (nil, "no answer")
        return Outcome(status: status, error: error, milliseconds: milliseconds)
    }

    /// Cancels the request in flight, and every later one (shutdown).
    func cancel() {
        current.withLock { current in
            current.cancelled = true
            current.task?.cancel()
        }
    }

    /// Frees the session once no request can start (after `cancel`, the worker stopped).
    func invalidate() {
        session.finishTasksAndInvalidate()
    }
}

/// Refuses every redirect: the 3xx itself is the answer (and not a success).
private final class NoRedirects: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
