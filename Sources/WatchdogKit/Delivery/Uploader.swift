import Locking
import Foundation
import Gzip
import WatchdogWire

/// Sends the outbox to watchdogd: session starts first (the denominator), then reports, in
/// gzip-compressed batches of at most 500 items, removing files only once the server answered
/// for them. Network errors and 5xx back off exponentially with jitter; 429 and 503 wait for
/// `Retry-After`; a permanent 4xx drops the batch (logged) — retrying it would never succeed.
/// Ids make retries safe: the server counts a re-sent item as a duplicate.
public final class Uploader: Sendable {
    /// What a pass did.
    public enum Outcome: Sendable, Equatable {
        /// The outbox is empty.
        case drained
        /// Not yet: the next attempt is due at this clock time.
        case waitingUntil(Double)
        /// Uploads are switched off (`enabled = false`).
        case disabled
    }

    public let endpoint: URL
    private let outbox: Outbox
    private let ingestKey: String
    private let transport: any HTTPTransport
    private let clock: @Sendable () -> Double
    private let random: @Sendable () -> Double
    private let logger: TaggedLogger
    private let maxItems: Int
    private let maxBytes: Int
    /// Longest backoff, seconds.
    public let maximumBackoff: Double

    private struct State {
        var nextAttemptAt: Double = -.infinity
        var failures = 0
        var enabled = true
        var running = false
        var uploadedTestCrash = false
    }
    private let state = Locked(State())

    public init(outbox: Outbox, endpoint: URL, ingestKey: String, transport: any HTTPTransport = URLSessionTransport(),
                clock: @escaping @Sendable () -> Double, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
                logger: TaggedLogger, maxItems: Int = Limits.itemsPerBatch, maxBytes: Int = 900_000, maximumBackoff: Double = 300) {
        self.outbox = outbox
        self.endpoint = endpoint
        self.ingestKey = ingestKey
        self.transport = transport
        self.clock = clock
        self.random = random
        self.logger = logger.child("upload")
        self.maxItems = min(maxItems, Limits.itemsPerBatch)
        self.maxBytes = maxBytes
        self.maximumBackoff = maximumBackoff
    }

    /// When the next attempt may start (clock time).
    public var nextAttemptAt: Double { state.withLock { $0.nextAttemptAt } }

    /// `false` stops uploading (the kill switch); `true` resumes.
    public func setEnabled(_ enabled: Bool) {
        state.withLock { $0.enabled = enabled }
    }

    /// Uploads until the outbox is empty or a failure says to wait. Returns at once if an
    /// attempt is not due yet or another pass is running.
    @discardableResult
    public func drain() async -> Outcome {
        let begin: Outcome? = state.withLock { state in
            if !state.enabled { return .disabled }
            if state.running || clock() < state.nextAttemptAt { return .waitingUntil(state.nextAttemptAt) }
            state.running = true
            return nil
        }
        if let begin { return begin }
        defer { state.withLock { $0.running = false } }
        for kind in Outbox.Kind.allCases {
            while true {
                let items = outbox.pending(kind, limit: maxItems, maxBytes: maxBytes)
                if items.isEmpty { break }
                if let wait = await send(items, kind: kind) { return .waitingUntil(wait) }
            }
        }
        return .drained
    }

    private static func isTestCrash(_ json: Data) -> Bool {
        (try? JSONDecoder().decode(Report.self, from: json))?.action?.testCrash == true
    }

    /// Sends one batch; returns when to try again if it must wait.
    private func send(_ items: [Outbox.Item], kind: Outbox.Kind) async -> Double? {
        var body = Data("{\"\(kind.rawValue)\":[".utf8)
        for (index, item) in items.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(item.json)
        }
        body.append(contentsOf: Array("]}".utf8))
        let request = TransportRequest(
            method: "POST", url: endpoint.appendingPathComponent("v1").appendingPathComponent(kind.rawValue),
            headers: ["Authorization": "Bearer \(ingestKey)", "Content-Type": "application/json", "Content-Encoding": "gzip"],
            body: Data(Gzip.compress(Array(body)))
        )
        let response: TransportResponse
        do {
            response = try await transport.send(request)
        } catch {
            return backOff("\(kind.rawValue) upload failed: \(error)")
        }
        switch response.status {
        case 200..<300:
            state.withLock { $0.failures = 0 }
            if let result = try? JSONDecoder().decode(IngestResult.self, from: response.body) {
                for rejected in result.rejected {
                    logger.log("server rejected \(kind.rawValue) item \(rejected.id ?? "#\(rejected.index)"): \(rejected.error.message)")
                }
            }
            if kind == .reports, items.contains(where: { Self.isTestCrash($0.json) }) {
                state.withLock { $0.uploadedTestCrash = true }
            }
            outbox.remove(items)
            return nil
        case 429, 503:
            let retryAfter = response.headers["retry-after"].flatMap(Self.retryAfterSeconds)
            if let retryAfter {
                let due = clock() + retryAfter
                state.withLock { $0.nextAttemptAt = due; $0.failures += 1 }
                logger.log("server busy (\(response.status)); retrying after \(retryAfter) s")
                return due
            }
            return backOff("server busy (\(response.status))")
        case 408, 425:
            return backOff("\(kind.rawValue) upload got \(response.status)")
        case 400..<500:
            let message = (try? JSONDecoder().decode(ErrorResponse.self, from: response.body))?.error.message ?? "status \(response.status)"
            logger.log("dropping \(items.count) \(kind.rawValue): the server refused them for good (\(response.status)): \(message)")
            outbox.remove(items)
            return nil
        default:
            return backOff("\(kind.rawValue) upload got \(response.status)")
        }
    }

    /// `Retry-After` as seconds or as an HTTP date (RFC 9110 §10.2.3).
    public static func retryAfterSeconds(_ value: String) -> Double? {
        if let seconds = Double(value.trimmingCharacters(in: .whitespaces)) { return max(0, seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: value).map { max(0, $0.timeIntervalSinceNow) }
    }

    /// Whether the last pass uploaded a test-crash report (the config should be re-fetched:
    /// the server counts it against the install's daily budget).
    public func takeUploadedTestCrash() -> Bool {
        state.withLock { state in
            defer { state.uploadedTestCrash = false }
            return state.uploadedTestCrash
        }
    }

    private func backOff(_ reason: String) -> Double {
        let due: Double = state.withLock { state in
            state.failures += 1
            let base = min(maximumBackoff, pow(2, Double(min(state.failures - 1, 30))))
            // "Equal jitter": half fixed, half random, so a fleet does not retry in lockstep.
            state.nextAttemptAt = clock() + base / 2 + random() * base / 2
            return state.nextAttemptAt
        }
        logger.log("\(reason); next attempt in \(String(format: "%.1f", due - clock())) s")
        return due
    }
}
