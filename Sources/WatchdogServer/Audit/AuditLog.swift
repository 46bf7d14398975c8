import Logging
import WatchdogStore

/// Writes the audit log: every change is one row — when, who, from where, what, which app,
/// the state before and after (without secrets: `AuditRedaction`).
///
/// A change is recorded by running it inside `around`: the row is bound to the task
/// (`PendingAudit`) and the store writes it in the change's own transaction, only when that
/// transaction changed a row — a request that changed nothing (a rollback to the current
/// version, a refusal) leaves none. Every store method that changes apps, credentials,
/// sessions, config, admission, attestation, releases, alerts or rollouts writes through
/// `SQLiteStore.auditedWrite` / `PostgresStore.auditedTransaction`; `AuditLogTests` performs
/// each kind of change and finds its row.
struct AuditLog: Sendable {
    let store: any TelemetryStore
    let clock: @Sendable () -> Int64
    let logger: Logger

    /// A row for `action` by `actor` from `address`, now.
    func entry(_ action: String, app: String?, actor: String, address: String, before: JSONValue? = nil, after: JSONValue? = nil) -> AuditEntry {
        AuditEntry(at: clock(), actor: actor, address: address, action: action, app: app,
                   before: before.map(AuditRedaction.text), after: after.map(AuditRedaction.text))
    }

    /// Runs `change` with `entry` pending; returns what it returned.
    func around<Result>(_ entry: AuditEntry, _ change: () throws(APIError) -> Result) throws(APIError) -> Result {
        let pending = PendingAudit([entry])
        var failure: APIError?
        let result: Result? = PendingAudit.$current.withValue(pending) { () -> Result? in
            do throws(APIError) { return try change() } catch { failure = error; return nil }
        }
        guard let result else { throw failure ?? .internalError }
        return result
    }

    /// Writes rows that go with no change (a failed sign-in) in a transaction of their own.
    func record(_ entries: [AuditEntry]) {
        do {
            try store.recordAudit(entries)
        } catch {
            logger.error("audit rows \(entries.map(\.action)) could not be written: \(error)")
        }
    }
}

/// The current change's pending audit row, for a handler that knows the state before and
/// after better than the request's body (config documents, settings).
enum AuditNote {
    /// An approved proposal's `approval` (who approved which proposal) stays in `after`.
    static func set(before: JSONValue?, after: JSONValue?) {
        PendingAudit.current?.update { entry in
            var after = after
            if case .object(let old)? = entry.after.map(AuditRedaction.value), let approval = old["approval"], case .object(var fields)? = after {
                fields["approval"] = approval
                after = .object(fields)
            }
            entry.before = before.map(AuditRedaction.text)
            entry.after = after.map(AuditRedaction.text)
        }
    }

    /// As `set`, from JSON text (`nil` stays `nil`; text that is not JSON is kept as a string).
    static func set(beforeJSON: String?, afterJSON: String?) {
        set(before: beforeJSON.map(AuditRedaction.value), after: afterJSON.map(AuditRedaction.value))
    }
}
