import PostgresClient

/// Whether a store across the network (PostgreSQL) answers, as this node last saw it: what
/// `/readyz`, the log and `/metrics` report without calling the database themselves.
public struct StoreReachability: Sendable, Equatable {
    /// False from the first lost connection until a write gets through again.
    public var isReachable: Bool
    /// Seconds since the last call that reached the database and came back.
    public var secondsSinceRoundTrip: Double
    /// Seconds since the last committed write.
    public var secondsSinceWrite: Double
    /// Why the database was last found unreachable; `nil` while it is reachable.
    public var failure: String?
    /// How long it has been (or, in a change to reachable, had been) unreachable, in seconds.
    public var unreachableForSeconds: Double
    /// Outages since the store opened.
    public var outages: Int

    init(_ pool: PostgresReachability) {
        isReachable = pool.isReachable
        secondsSinceRoundTrip = pool.secondsSinceRoundTrip
        secondsSinceWrite = pool.secondsSinceWrite
        failure = pool.failure
        unreachableForSeconds = pool.unreachableForSeconds
        outages = pool.outages
    }
}

extension TelemetryStore {
    /// A store in a local file: never across a network.
    public var reachability: StoreReachability? { nil }
    /// A store in a local file has no outages to report.
    public func observeReachability(_ observer: @escaping @Sendable (StoreReachability) -> Void) {}
}

extension PostgresStore {
    /// The pool's view of the database (no call to it).
    public var reachability: StoreReachability? { StoreReachability(pool.reachability) }

    /// Calls `observer` when the database is lost and when a write gets through again.
    public func observeReachability(_ observer: @escaping @Sendable (StoreReachability) -> Void) {
        pool.observe { observer(StoreReachability($0)) }
    }

    /// Whether `error` says the database could not be reached (rather than refused the call).
    public static func isUnreachable(_ error: any Error) -> Bool {
        (error as? PostgresError)?.isConnectionLoss ?? false
    }
}
