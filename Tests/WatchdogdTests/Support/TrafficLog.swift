import Foundation
import Gzip
import WatchdogKit

/// Every upload WatchdogKit made through a `RecordingTransport`: when it started and ended,
/// how it ended and which report ids it carried, so a test can tell what the server
/// acknowledged before, during and after an event (a kill, a backup).
final class TrafficLog: Sendable {
    /// One upload (`POST /v1/reports` or `/v1/sessions`).
    struct Upload: Sendable {
        var path: String
        var started: Date
        var ended: Date
        /// `nil`: the exchange failed (connection refused or reset, timeout).
        var status: Int?
        /// The report ids the body carried (none for session starts).
        var reportIDs: [String]
        /// Those the answer acknowledged: all but the ones it rejected, on a 2xx.
        var acknowledgedIDs: [String]

        var acknowledged: Bool { status.map { (200..<300).contains($0) } ?? false }
    }

    private let uploads = Locked<[Upload]>([])
    /// When each upload still waiting for its answer started.
    private let waiting = Locked<[UUID: Date]>([:])

    /// Uploads started after `start` whose answer has not come yet.
    func inFlight(startedAfter start: Date = .distantPast) -> Int {
        waiting.value.values.filter { $0 > start }.count
    }

    /// Every finished upload so far.
    var all: [Upload] { uploads.value }

    func begin(_ id: UUID, at started: Date) { waiting.update { $0[id] = started } }

    func end(_ id: UUID, _ upload: Upload) {
        uploads.update { $0.append(upload) }
        waiting.update { $0[id] = nil }
    }

    /// Acknowledged uploads that started after `start` and ended before `end`.
    func acknowledged(from start: Date, to end: Date = .distantFuture) -> [Upload] {
        all.filter { $0.acknowledged && $0.started >= start && $0.ended <= end }
    }
}

/// A real transport (URLSession) that writes every upload into a `TrafficLog`; it changes
/// nothing about what is sent or answered.
struct RecordingTransport: HTTPTransport {
    let inner: any HTTPTransport
    let log: TrafficLog

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let path = request.url.path
        guard request.method == "POST" else { return try await inner.send(request) }
        let ids = Self.reportIDs(request)
        let started = Date(), id = UUID()
        log.begin(id, at: started)
        do {
            let response = try await inner.send(request)
            let rejected = Set(((try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any])?["rejected"]
                .flatMap { $0 as? [[String: Any]] }?.compactMap { $0["id"] as? String } ?? [])
            let acknowledged = (200..<300).contains(response.status) ? ids.filter { !rejected.contains($0) } : []
            log.end(id, TrafficLog.Upload(path: path, started: started, ended: Date(), status: response.status, reportIDs: ids, acknowledgedIDs: acknowledged))
            return response
        } catch {
            log.end(id, TrafficLog.Upload(path: path, started: started, ended: Date(), status: nil, reportIDs: ids, acknowledgedIDs: []))
            throw error
        }
    }

    /// The ids of a `{"reports": [...]}` body, gzip-compressed or not.
    private static func reportIDs(_ request: TransportRequest) -> [String] {
        guard request.url.path.hasSuffix("/v1/reports"), let body = request.body else { return [] }
        let gzipped = request.headers.contains { $0.key.lowercased() == "content-encoding" && $0.value == "gzip" }
        guard let json = gzipped ? (try? Gzip.decompress(Array(body), limit: 64 << 20)).map({ Data($0) }) : body,
              let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else { return [] }
        return (object["reports"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }
}
