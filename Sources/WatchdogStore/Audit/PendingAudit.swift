import Locking

/// Audit rows waiting for the change they record: the server binds them to the current task
/// (`PendingAudit.$current.withValue`) around the store call that makes the change, and the
/// store writes them in that change's transaction — only if the transaction changed a row; a
/// read, or a write that changed nothing, leaves them pending for the next transaction.
///
/// The stores' methods of apps, credentials, sessions and sign-in links, config, admission,
/// attestation settings, releases, alert rules and hooks, and rollouts run through
/// `SQLiteStore.auditedWrite` and `PostgresStore.auditedTransaction`/`auditedConnection`.
public final class PendingAudit: Sendable {
    /// The rows of the change being made on this task, if it is audited.
    @TaskLocal public static var current: PendingAudit?

    private let state: Locked<(entries: [AuditEntry], written: Bool)>

    public init(_ entries: [AuditEntry]) {
        state = Locked((entries, false))
    }

    /// The rows for a store's transaction to write, if no earlier one did (a read, or a write
    /// that changed nothing, leaves them for the next).
    func unwritten() -> [AuditEntry] {
        state.withLock { $0.written ? [] : $0.entries }
    }

    /// Called once a transaction that wrote the rows committed.
    func markWritten() {
        state.withLock { $0.written = true }
    }

    /// Whether a store wrote the rows with a change.
    public var wasWritten: Bool { state.withLock { $0.written } }

    /// Changes the rows not yet written (a handler adding the state before and after).
    public func update(_ change: (inout AuditEntry) -> Void) {
        state.withLock { state in
            guard !state.written else { return }
            for index in state.entries.indices { change(&state.entries[index]) }
        }
    }

    /// The rows as they stand.
    public var entries: [AuditEntry] { state.withLock { $0.entries } }


}
