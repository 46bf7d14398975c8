import WatchdogStore
import WatchdogWire

/// A proposal as the API shows it: what it would change (`action`, the request's body, the dry
/// run's `impact`), who proposed it, and where it stands (`expired`: pending past its time).
enum ProposalView {
    static func view(_ record: ProposalRecord, now: Int64) -> JSONValue {
        var status = record.status
        if status == "pending" && record.expiresAt <= now { status = "expired" }
        let query = JSONValue.parse(Array(record.query.utf8)) ?? .object([:])
        return .object([
            "id": .string(record.id),
            "app": .string(record.app),
            "kinds": .array(record.kinds.split(separator: ",").map { .string(String($0)) }),
            "action": .string(record.action),
            "proposer": .string(record.proposer),
            "created_at": .string(Timestamp.format(milliseconds: record.createdAt)),
            "expires_at": .string(Timestamp.format(milliseconds: record.expiresAt)),
            "status": .string(status),
            "method": .string(record.method),
            "path": .string(record.path),
            "query": query,
            "body": record.body.isEmpty ? .null : (JSONValue.parse(Array(record.body.utf8)) ?? .string(record.body)),
            "impact": record.impact.flatMap { JSONValue.parse(Array($0.utf8)) } ?? .null,
            "decided_by": record.decidedBy.map(JSONValue.string) ?? .null,
            "decided_at": record.decidedAt.map { .string(Timestamp.format(milliseconds: $0)) } ?? .null,
            "outcome": record.outcome.map(JSONValue.string) ?? .null,
        ])
    }
}
