import Locking
import Foundation
import Gzip
import WatchdogWire

/// What the host app is told about delivery (`Uploader.setStatusHandler`).
public enum DeliveryStatus: Sendable, Equatable {
    /// The last batch was answered with 2xx.
    case delivering
    /// The server refused the ingest key (401 or 403): nothing is sent or deleted until a new
    /// key is set (`setIngestKey`) or the backoff ends; the outbox keeps everything.
    case ingestKeyRefused(status: Int, message: String)
    /// Another refusal (404, 413, 3xx, other 4xx — a proxy, a wrong endpoint): the outbox is
    /// kept and the uploader backs off.
    case refused(status: Int, message: String)
}

/// Sends the outbox to watchdogd: session starts first (the denominator), then reports, in
/// gzip-compressed batches of at most 500 items. Items leave the outbox only when a 2xx answer
/// accounts for them (accepted, duplicate, or rejected one by one in its `rejected` list — those
/// are quarantined and counted as `client_dropped.quarantined`).
///
/// - Network errors, 408/425 and 5xx back off exponentially with jitter (capped at
///   `maximumBackoff`); 429 and 503 wait for `Retry-After`, capped at `maximumBackoff` too.
/// - 401/403 ("ingest key refused"), 404, 413 and other refusals keep the outbox and back off;
///   the host app hears about them through the status handler, and the log says why. A 413
///   also halves the byte budget of later batches (a proxy's smaller body limit).
/// - A whole-batch `400 invalid_json`/`invalid_shape` (one malformed outbox file makes the
///   body invalid) is bisected: the halves are sent on their own until the poison item is
///   alone; it alone is quarantined (moved aside and counted), everything else is delivered.
/// - Counts of evicted and quarantined items go with the next reports batch as
///   `client_dropped`, with an id the server counts once.
///
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

    /// The server's base URL.
    public let endpoint: URL
    private let outbox: Outbox
    private let transport: any HTTPTransport
    private let clock: @Sendable () -> Double
    private let random: @Sendable () -> Double
    private let logger: TaggedLogger
    private let maxItems: Int
    /// Longest backoff (and longest `Retry-After` honoured), seconds.
    public let maximumBackoff: Double
    /// Signs each batch when the app opted in to App Attest (`AppAttester`).
    private let attester: AppAttester?

    private struct State {
        var ingestKey: String
        var nextAttemptAt: Double = -.infinity
        var failures = 0
        var enabled = true
        var attesting = true
        var running = false
        var uploadedTestCrash = false
        var maxBytes: Int
        var status: DeliveryStatus?
        var statusHandler: (@Sendable (DeliveryStatus) -> Void)?
    }
    private let state: Locked<State>

    /// What one request came to.
    private enum Answer {
        case delivered
        case wait(Double)
        /// `400` for the batch as a whole: something in it is not readable by the server.
        case wholeBatchRefused(String)
    }

    /// - Parameters:
    ///   - outbox: what is sent, and what a 2xx answer removes.
    ///   - endpoint: the server's base URL.
    ///   - ingestKey: the app's ingest key (`setIngestKey` changes it).
    ///   - transport: how batches are sent.
    ///   - clock: monotonic seconds.
    ///   - random: uniform in 0..<1, for the backoff's jitter.
    ///   - logger: where refusals and failures are logged.
    ///   - maxItems: items per batch at most (the server's limit).
    ///   - maxBytes: bytes per batch at most before compression (halved after a 413).
    ///   - maximumBackoff: the longest wait between attempts (and longest `Retry-After` honoured), seconds.
    ///   - attester: signs each batch when the app opted in to App Attest.
    public init(outbox: Outbox, endpoint: URL, ingestKey: String, transport: any HTTPTransport = URLSessionTransport(),
                clock: @escaping @Sendable () -> Double, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
                logger: TaggedLogger, maxItems: Int = Limits.itemsPerBatch, maxBytes: Int = 900_000, maximumBackoff: Double = 300,
                attester: AppAttester? = nil) {
        self.attester = attester
        self.outbox = outbox
        self.endpoint = endpoint
        self.transport = transport
        self.clock = clock
        self.random = random
        self.logger = logger.child("upload")
        self.maxItems = min(maxItems, Limits.itemsPerBatch)
        self.maximumBackoff = maximumBackoff
        state = Locked(State(ingestKey: ingestKey, maxBytes: maxBytes))
    }

    /// When the next attempt may start (clock time).
    public var nextAttemptAt: Double { state.withLock { $0.nextAttemptAt } }

    /// The last delivery status (`nil` before the first answer).
    public var status: DeliveryStatus? { state.withLock { $0.status } }

    /// `false` stops uploading (the kill switch); `true` resumes.
    public func setEnabled(_ enabled: Bool) {
        state.withLock { $0.enabled = enabled }
    }

    /// Whether uploads are signed with App Attest (when the app opted in): `false` for an install
    /// not yet onboarded (`attest_percent`), whose uploads go unattested and which attests nothing.
    public func setAttesting(_ attesting: Bool) {
        state.withLock { $0.attesting = attesting }
    }

    /// Called on the uploader's task (not the main thread) whenever the status changes.
    public func setStatusHandler(_ handler: @escaping @Sendable (DeliveryStatus) -> Void) {
        state.withLock { $0.statusHandler = handler }
    }

    /// A new ingest key (the old one was revoked): the next pass tries at once with it.
    public func setIngestKey(_ key: String) {
        let changed = state.withLock { state -> Bool in
            guard state.ingestKey != key else { return false }
            state.ingestKey = key
            state.failures = 0
            state.nextAttemptAt = -.infinity
            return true
        }
        attester?.setIngestKey(key)
        if changed { logger.log("ingest key replaced; retrying at once") }
    }

    /// Uploads until the outbox is empty or a failure says to wait. Returns at once if an
    /// attempt is not due yet or another pass is running. With `allowsConstrainedNetwork` false
    /// (the flush when the app goes to the background) nothing is sent over a network in Low
    /// Data Mode: the requests fail there, and the outbox waits for the next pass.
    @discardableResult
    public func drain(allowsConstrainedNetwork: Bool = true) async -> Outcome {
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
                let maxBytes = state.withLock { $0.maxBytes }
                let items = outbox.pending(kind, limit: maxItems, maxBytes: maxBytes)
                // Drop counts still go up when no report is left to carry them.
                if items.isEmpty, kind != .reports || outbox.nextDropToSend() == nil { break }
                if let wait = await deliver(items, kind: kind, constrained: allowsConstrainedNetwork) { return .waitingUntil(wait) }
            }
        }
        return .drained
    }

    /// Sends a batch, bisecting it when the server refuses it as a whole; returns when to try
    /// again if it must wait.
    private func deliver(_ items: [Outbox.Item], kind: Outbox.Kind, constrained: Bool) async -> Double? {
        switch await send(items, kind: kind, constrained: constrained) {
        case .delivered:
            return nil
        case .wait(let due):
            return due
        case .wholeBatchRefused(let message):
            guard items.count > 1 else {
                logger.log("quarantined \(kind.rawValue) item \(items[0].file.lastPathComponent): the server cannot read it (\(message))")
                outbox.quarantine(items, kind: kind)
                return nil
            }
            logger.log("the server refused a batch of \(items.count) \(kind.rawValue) as a whole (\(message)); sending it in halves")
            let half = items.count / 2
            if let due = await deliver(Array(items[..<half]), kind: kind, constrained: constrained) { return due }
            return await deliver(Array(items[half...]), kind: kind, constrained: constrained)
        }
    }

    private static func isTestCrash(_ json: Data) -> Bool {
        (try? JSONDecoder().decode(Report.self, from: json))?.action?.testCrash == true
    }

    /// Sends one batch (with the pending drop counts, for reports).
    private func send(_ items: [Outbox.Item], kind: Outbox.Kind, constrained: Bool) async -> Answer {
        var body = Data("{\"\(kind.rawValue)\":[".utf8)
        for (index, item) in items.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(item.json)
        }
        body.append(UInt8(ascii: "]"))
        let dropped = kind == .reports ? outbox.nextDropToSend() : nil
        if let dropped, let json = try? JSONEncoder().encode(dropped) {
            body.append(contentsOf: Array(",\"\(ClientDropped.key)\":".utf8))
            body.append(json)
        }
        body.append(UInt8(ascii: "}"))
        let key = state.withLock { $0.ingestKey }
        var headers = ["Authorization": "Bearer \(key)", "Content-Type": "application/json"]
        // Over the JSON before gzip: what the server hashes is the body it decodes.
        if let attester, state.withLock({ $0.attesting }), let assertion = await attester.assertionHeader(for: body) {
            headers["Watchdog-Assertion"] = assertion
        }
        let payload: Data
        do {
            payload = Data(try Gzip.compress(Array(body)))
            headers["Content-Encoding"] = "gzip"
        } catch {
            // gzip only saves bandwidth: the batch goes uncompressed (its size is bounded alike).
            logger.log("gzip failed (\(error)); sending the \(kind.rawValue) batch uncompressed")
            payload = Data(body)
        }
        var request = TransportRequest(
            method: "POST", url: endpoint.appendingPathComponent("v1").appendingPathComponent(kind.rawValue),
            headers: headers, body: payload
        )
        request.allowsConstrainedNetworkAccess = constrained
        let response: TransportResponse
        do {
            response = try await transport.send(request)
        } catch {
            return .wait(backOff("\(kind.rawValue) upload failed: \(error)"))
        }
        let error = (try? JSONDecoder().decode(ErrorResponse.self, from: response.body))?.error
        let message = error?.message ?? "status \(response.status)"
        switch response.status {
        case 200..<300:
            // Only an answer that accounts for every item removes them (not a captive portal's 200).
            guard let result = try? JSONDecoder().decode(IngestResult.self, from: response.body),
                  result.accepted + result.duplicates + result.rejected.count == items.count else {
                return .wait(refused(response.status, "\(kind.rawValue) upload got \(response.status) without an ingest result for its \(items.count) items"))
            }
            state.withLock { $0.failures = 0 }
            setStatus(.delivering)
            // An item the server rejects on its own is set aside and counted (`client_dropped`'s
            // `quarantined`), not just deleted: the release's numbers say it was lost.
            var rejectedIndices = Set<Int>()
            for rejected in result.rejected where items.indices.contains(rejected.index) {
                rejectedIndices.insert(rejected.index)
                logger.log("server rejected \(kind.rawValue) item \(rejected.id ?? "#\(rejected.index)"): \(rejected.error.message); quarantined")
            }
            if kind == .reports, items.contains(where: { Self.isTestCrash($0.json) }) {
                state.withLock { $0.uploadedTestCrash = true }
            }
            let rejectedItems = items.indices.filter(rejectedIndices.contains).map { items[$0] }
            outbox.remove(items.indices.filter { !rejectedIndices.contains($0) }.map { items[$0] })
            if !rejectedItems.isEmpty { outbox.quarantine(rejectedItems, kind: kind) }
            if let dropped { outbox.acknowledgeDrop(id: dropped.id) }
            return .delivered
        case 400 where error?.code == "invalid_client_dropped":
            // Our own counts are what the server cannot take: give them up, keep the items.
            logger.log("server refused client_dropped (\(message)); discarding those counts")
            outbox.acknowledgeDrop(id: dropped?.id)
            return items.isEmpty ? .delivered : await send(items, kind: kind, constrained: constrained)
        case 400 where error?.code == "invalid_json" || error?.code == "invalid_shape":
            if items.isEmpty { return .wait(refused(response.status, message)) }
            return .wholeBatchRefused(message)
        case 429, 503:
            if let retryAfter = response.headers["retry-after"].flatMap(Self.retryAfterSeconds) {
                let wait = min(retryAfter, maximumBackoff)
                let due = clock() + wait
                state.withLock { $0.nextAttemptAt = due; $0.failures += 1 }
                logger.log("server busy (\(response.status)); retrying after \(wait) s (Retry-After \(retryAfter), at most \(maximumBackoff))")
                return .wait(due)
            }
            return .wait(backOff("server busy (\(response.status))"))
        case 408, 425, 500...:
            return .wait(backOff("\(kind.rawValue) upload got \(response.status)"))
        case 401, 403:
            if error?.code == "assertion_unknown_key" { attester?.serverForgotKey() }
            setStatus(.ingestKeyRefused(status: response.status, message: message))
            return .wait(backOff("ingest key refused (\(response.status)): \(message); keeping \(outbox.count(kind)) \(kind.rawValue)"))
        case 413:
            let halved = state.withLock { state -> Int in
                state.maxBytes = max(1, state.maxBytes / 2)
                return state.maxBytes
            }
            return .wait(refused(response.status, "\(message); batches now at most \(halved) bytes"))
        default:
            return .wait(refused(response.status, message))
        }
    }

    /// A refusal that is not the data's fault: keep everything, tell the host app, back off.
    private func refused(_ status: Int, _ message: String) -> Double {
        setStatus(.refused(status: status, message: message))
        return backOff("server refused the upload (\(status)): \(message); keeping the outbox")
    }

    private func setStatus(_ status: DeliveryStatus) {
        let handler: (@Sendable (DeliveryStatus) -> Void)? = state.withLock { state in
            guard state.status != status else { return nil }
            state.status = status
            return state.statusHandler
        }
        handler?(status)
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
