import Foundation
import Locking

/// The database as a pool last reached it: what readiness, the log and `/metrics` say.
public struct PostgresReachability: Sendable, Equatable {
    /// False from the first lost connection until a write gets through again.
    public var isReachable: Bool
    /// Seconds since the last call that reached the database and came back.
    public var secondsSinceRoundTrip: Double
    /// Seconds since the last committed write (an ingest, or the probe's own).
    public var secondsSinceWrite: Double
    /// Why the database was last found unreachable; `nil` while it is reachable.
    public var failure: String?
    /// Seconds the database has been unreachable (0 while it is reachable).
    public var unreachableForSeconds: Double
    /// How many times it was lost since the pool opened.
    public var outages: Int
}

/// The pool's record of its round trips (under the pool's lock).
struct PostgresHealth {
    private var isUp = true
    private var failure: String?
    private var downSince: UInt64 = 0
    private var lastRoundTrip: UInt64 = 0
    private var lastWrite: UInt64 = 0
    private var outages = 0

    private static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// A call came back; returns the new state when that ended an outage (only a write does).
    mutating func succeeded(wrote: Bool) -> PostgresReachability? {
        let now = Self.now
        lastRoundTrip = now
        if wrote { lastWrite = now }
        guard !isUp, wrote else { return nil }
        let snapshot = reachability
        isUp = true
        failure = nil
        var back = reachability
        back.unreachableForSeconds = snapshot.unreachableForSeconds
        return back
    }

    /// A call lost its connection; returns the new state when that began an outage.
    mutating func failed(_ error: PostgresError) -> PostgresReachability? {
        guard isUp else { return nil }
        isUp = false
        failure = error.message
        downSince = Self.now
        outages += 1
        return reachability
    }

    /// The error a call gets at once while the database is unreachable.
    func refusal() -> PostgresError? {
        guard !isUp else { return nil }
        let seconds = Double(Self.now - downSince) / 1e9
        return .unreachable("not tried: the database has been unreachable for \(String(format: "%.1f", seconds)) s (\(failure ?? "connection lost"))")
    }

    var reachability: PostgresReachability {
        let now = Self.now
        return PostgresReachability(isReachable: isUp, secondsSinceRoundTrip: Double(now - lastRoundTrip) / 1e9,
                                    secondsSinceWrite: Double(now - lastWrite) / 1e9, failure: failure,
                                    unreachableForSeconds: isUp ? 0 : Double(now - downSince) / 1e9, outages: outages)
    }
}

/// A thread (`wd-pg-probe`) that keeps the pool's view of the database fresh: a small write
/// (`BEGIN; SELECT txid_current(); COMMIT`, which assigns a transaction id and so needs a
/// writable primary) every `interval` when nothing else reached the database, and every
/// quarter second while it is unreachable, so a healed network is noticed at once, without a
/// request having to wait for it.
public final class PostgresProbe: Sendable {
    private let stopped = Locked(false)

    /// Starts probing `pool` until `stop()` or until the pool is gone.
    public init(pool: PostgresPool, interval: Double = 1) {
        ServiceThread.start("wd-pg-probe") { [weak pool, stopped] in
            while !stopped.withLock({ $0 }) {
                guard let current = pool else { return }
                let state = current.reachability
                if !state.isReachable || state.secondsSinceRoundTrip >= interval {
                    _ = try? current.probe(wrote: true) { connection in
                        try connection.transaction { try connection.execute("SELECT txid_current()") }
                    }
                }
                usleep(current.reachability.isReachable ? UInt32(interval * 250_000) : 250_000)
            }
        }
    }

    /// Stops the thread after its current round.
    public func stop() {
        stopped.withLock { $0 = true }
    }
}
