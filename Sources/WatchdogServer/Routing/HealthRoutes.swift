import WatchdogHTTP
import WatchdogStore

/// `GET /readyz`: the store can be written to, and the ingest queue has room.
///
/// A store in a local file (SQLite) is asked (`checkWritable`) and the last commit must have
/// succeeded. A database across the network is not called: readiness is read from the last
/// round trip the node made (`TelemetryStore.reachability`) — not ready while it is known lost,
/// nor when no write (an ingest, or the store's probe every second) committed in the last
/// `writeAgeLimit` seconds — so a probe never waits on the network, and a node that lost its
/// database says so until a write gets through again.
struct HealthRoutes: Sendable {
    let store: any TelemetryStore
    let queue: IngestQueue
    /// Seconds without a committed write after which a node on PostgreSQL is not ready.
    static let writeAgeLimit = 3.0

    func readiness() throws(APIError) -> HTTPResponse {
        if let reachability = store.reachability {
            guard reachability.isReachable else {
                throw .storeUnreachable("lost \(StoreOutage.seconds(reachability.unreachableForSeconds)) s ago: \(reachability.failure ?? "connection lost")")
            }
            guard reachability.secondsSinceWrite < Self.writeAgeLimit else {
                throw .storeUnreachable("no write has committed for \(StoreOutage.seconds(reachability.secondsSinceWrite)) s")
            }
        } else {
            do { try store.checkWritable() } catch { throw .unavailable("the store is not writable: \(error)") }
            if let failure = queue.lastFailure { throw .unavailable("the last commit failed: \(failure)") }
        }
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
