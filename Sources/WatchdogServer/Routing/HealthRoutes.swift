import WatchdogHTTP
import WatchdogStore

/// `GET /readyz`: the store's files are writable, the last commit succeeded, the ingest queue has room.
struct HealthRoutes: Sendable {
    let store: any TelemetryStore
    let queue: IngestQueue

    func readiness() throws(APIError) -> HTTPResponse {
        do { try store.checkWritable() } catch { throw .unavailable("the store is not writable: \(error)") }
        if let failure = queue.lastFailure { throw .unavailable("the last commit failed: \(failure)") }
        let depth = queue.depth
        guard depth < queue.capacity * 9 / 10 else { throw .overloaded("the ingest queue is nearly full (\(depth) items)") }
        return JSONBody.response(Readiness(status: "ready", ingestQueueDepth: depth))
    }
}

/// `GET /readyz`.
struct Readiness: Encodable {
    var status: String
    var ingestQueueDepth: Int

    enum CodingKeys: String, CodingKey {
        case status
        case ingestQueueDepth = "ingest_queue_depth"
    }
}
