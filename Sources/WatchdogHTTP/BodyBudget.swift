import Locking
import Synchronization

/// Memory that bodies being received may hold: in all, and per client, so one client (one
/// address, or one client behind a trusted proxy) cannot take what every other client needs.
final class BodyBudget: Sendable {
    let total: Int
    let perClient: Int
    private let held = Atomic<Int>(0)
    private let byClient = Locked<[String: Int]>([:])

    init(total: Int, perClient: Int) {
        self.total = total
        self.perClient = perClient
    }

    /// Whether `client` already holds all it may.
    func isExhausted(for client: String) -> Bool {
        byClient.withLock { ($0[client] ?? 0) >= perClient } || held.load(ordering: .relaxed) >= total
    }

    /// Counts `count` more bytes held for `client`; false when that passes the client's share
    /// or the total (the bytes are counted all the same: `release` gives them back).
    func take(_ count: Int, for client: String) -> Bool {
        let clientHeld = byClient.withLock { byClient -> Int in
            let now = (byClient[client] ?? 0) + count
            byClient[client] = now
            return now
        }
        let totalHeld = held.add(count, ordering: .relaxed).newValue
        return clientHeld <= perClient && totalHeld <= total
    }

    /// Gives back bytes counted for `client`.
    func release(_ count: Int, for client: String) {
        guard count > 0 else { return }
        held.subtract(count, ordering: .relaxed)
        byClient.withLock { byClient in
            let left = (byClient[client] ?? 0) - count
            byClient[client] = left > 0 ? left : nil
        }
    }
}
