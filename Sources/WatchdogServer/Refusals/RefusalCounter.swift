import Dispatch
import Locking
import Logging
import WatchdogStore

/// Refused attestations and uploads per app, kind, code and hour (docs/security.md,
/// "Refusals"), for the attestation card's "last 24 hours" (and the uploads `require` would
/// refuse, for its dialog). A refusal costs a dictionary
/// increment: each node keeps its counts in memory and adds them to the store's once a minute
/// (and when it stops), so a flood of forged uploads is not a write per refusal, and the stored
/// counts are the cluster's. Only apps of a real ingest key are counted (a key that names no app
/// is refused before), codes come from a fixed set, and 48 hours are kept.
final class RefusalCounter: Sendable {
    enum Kind: String, Sendable {
        /// `POST /v1/attest` and `POST /v1/attest/challenge`.
        case attestation
        /// `POST /v1/reports` and `POST /v1/sessions`.
        case upload
        /// Uploads stored under `observe` without an assertion: `require` would refuse them
        /// (`assertion_required`). Not refusals: the Require dialog's figure.
        case wouldRefuse = "would_refuse"
    }

    /// The codes counted (docs/api.md, "Attested installs"); any other is counted as `other`.
    static let codes: Set<String> = [
        "rate_limited", "too_many_challenges", "attestation_off", "challenge_unknown", "challenge_expired", "attestation_malformed",
        "attestation_untrusted_chain", "attestation_nonce_mismatch", "attestation_app_mismatch", "attestation_key_mismatch",
        "attestation_counter_not_zero", "attestation_environment_mismatch", "key_already_attested",
        "assertion_required", "assertion_unknown_key", "assertion_invalid_signature", "assertion_counter_replayed",
        "assertion_install_mismatch", "assertion_malformed", "assertion_app_mismatch",
    ]
    static let flushSeconds = 60
    static let keptHours: Int64 = 48
    static let hour: Int64 = 3_600_000
    /// Counts a node holds between flushes at most (apps × kinds × codes × hours): past it, new
    /// ones are dropped until the next flush.
    static let maximumPending = 20_000

    private struct Key: Hashable {
        var app: String
        var kind: Kind
        var code: String
        var hour: Int64
    }

    private let store: any TelemetryStore
    private let clock: @Sendable () -> Int64
    private let logger: Logger
    private let pending = Locked<[Key: Int]>([:])
    /// One flush at a time on this node.
    private let flushing = Locked(())
    private let background: Bool
    private let stopping = Locked(false)
    private let wakeUp = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(store: any TelemetryStore, clock: @escaping @Sendable () -> Int64, logger: Logger, background: Bool) {
        self.store = store
        self.clock = clock
        self.logger = logger
        self.background = background
        if background {
            ServiceThread.start("wd-refusals") { [self] in run() }
        }
    }

    /// Counts one refusal of `code` for `app` (the app of the request's ingest key).
    func record(app: String, kind: Kind, code: String) {
        let key = Key(app: app, kind: kind, code: Self.codes.contains(code) ? code : "other", hour: clock() / Self.hour * Self.hour)
        pending.withLock { pending in
            if pending[key] == nil, pending.count >= Self.maximumPending { return }
            pending[key, default: 0] += 1
        }
    }

    /// Counts `error` when it is a refusal (4xx) of a request with an app's ingest key, and
    /// throws it on.
    func counting<Result>(app: String?, kind: Kind, _ body: () throws(APIError) -> Result) throws(APIError) -> Result {
        do {
            return try body()
        } catch {
            if let app, (400..<500).contains(error.status) { record(app: app, kind: kind, code: error.code) }
            throw error
        }
    }

    /// Adds this node's counts to the store's and drops hours past `keptHours`. Counts the
    /// store did not take are kept for the next flush.
    func flush() throws {
        try flushing.withLock { _ in
            let taken = pending.withLock { pending in
                defer { pending.removeAll() }
                return pending
            }
            let keepFrom = clock() / Self.hour * Self.hour - (Self.keptHours - 1) * Self.hour
            let counts = taken.filter { $0.key.hour >= keepFrom }
                .map { RefusalCount(app: $0.key.app, kind: $0.key.kind.rawValue, code: $0.key.code, hour: $0.key.hour, count: $0.value) }
            do {
                try store.addRefusals(counts, keepFrom: keepFrom)
            } catch {
                pending.withLock { pending in
                    for (key, count) in taken where pending[key] != nil || pending.count < Self.maximumPending { pending[key, default: 0] += count }
                }
                throw error
            }
        }
    }

    /// The app's refusals in the last 24 hours (this hour and the 23 before), per kind and code,
    /// most first: the store's and this node's not yet flushed.
    func lastDay(app: String) throws -> (since: Int64, counts: [RefusalCount]) {
        let since = clock() / Self.hour * Self.hour - 23 * Self.hour
        var totals: [String: RefusalCount] = [:]
        func add(_ kind: String, _ code: String, _ count: Int) {
            totals["\(kind) \(code)", default: RefusalCount(app: app, kind: kind, code: code, hour: since, count: 0)].count += count
        }
        for stored in try store.refusals(app: app, since: since) { add(stored.kind, stored.code, stored.count) }
        for (key, count) in pending.withLock({ $0 }) where key.app == app && key.hour >= since { add(key.kind.rawValue, key.code, count) }
        return (since, totals.values.sorted { ($0.count, $1.kind, $1.code) > ($1.count, $0.kind, $0.code) })
    }

    // MARK: The thread

    func stop() {
        stopping.withLock { $0 = true }
        if background {
            wakeUp.signal()
            finished.wait()
        }
        do { try flush() } catch { logger.warning("refusal counts not stored at stop: \(error)") }
    }

    private func run() {
        while true {
            _ = wakeUp.wait(timeout: .now() + .seconds(Self.flushSeconds))
            if stopping.withLock({ $0 }) { break }
            do { try flush() } catch { logger.warning("refusal counts not stored: \(error)") }
        }
        finished.signal()
    }
}
