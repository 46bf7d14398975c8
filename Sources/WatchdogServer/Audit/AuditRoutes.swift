import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// `GET /v1/admin/audit` (a page, newest first) and `GET /v1/admin/audit.ndjson` (every row
/// matching, one JSON object a line). Filters: `app`, `actor`, `action`, `from` and `to`
/// (RFC 3339; `to` excluded); pages by `before` (a row id). An admin for every app sees every
/// row; an admin of some apps sees the rows of those apps only (not sign-ins or tokens, which
/// are of no app), and any other app is, to it, one that does not exist.
struct AuditRoutes: Sendable {
    let store: any TelemetryStore
    let clock: @Sendable () -> Int64
    /// The most rows an export holds (newest first); narrow it with `from` and `to`.
    static let exportLimit = 100_000

    func page(_ request: HTTPRequest, principal: Principal) throws(APIError) -> HTTPResponse {
        let filter = try Self.filter(request, principal: principal)
        let limit = try ReleaseLookup.limit(request.query["limit"], default: 100, maximum: 1000)
        let before = try Self.before(request.query["before"])
        let rows = try storeCall { try store.auditEntries(filter, before: before, limit: limit) }
        let next: JSONValue = rows.count == limit ? rows.last.map { .string(String($0.id)) } ?? .null : .null
        return JSONBody.response(JSONValue.object(["entries": .array(rows.map(Self.view)), "next_before": next]))
    }

    func export(_ request: HTTPRequest, principal: Principal) throws(APIError) -> HTTPResponse {
        let filter = try Self.filter(request, principal: principal)
        var before = try Self.before(request.query["before"])
        var body: [UInt8] = []
        var count = 0
        while count < Self.exportLimit {
            let rows = try storeCall { try store.auditEntries(filter, before: before, limit: 1000) }
            for row in rows {
                body += (try? JSONBody.encode(Self.view(row))) ?? []
                body.append(UInt8(ascii: "\n"))
            }
            count += rows.count
            guard rows.count == 1000, let last = rows.last else { break }
            before = last.id
        }
        return HTTPResponse(status: 200, headers: [
            ("Content-Type", "application/x-ndjson; charset=utf-8"),
            ("Content-Disposition", "attachment; filename=\"watchdog-audit.ndjson\""),
            ("X-Content-Type-Options", "nosniff"),
            ("Cache-Control", "no-store"),
        ], body: body)
    }

    /// A row as the API shows it: `before` and `after` as JSON, not text.
    static func view(_ entry: AuditEntry) -> JSONValue {
        .object([
            "id": .string(String(entry.id)),
            "at": .string(Timestamp.format(milliseconds: entry.at)),
            "actor": .string(entry.actor),
            "address": .string(entry.address),
            "action": .string(entry.action),
            "app": entry.app.map(JSONValue.string) ?? .null,
            "before": entry.before.map(AuditRedaction.value) ?? .null,
            "after": entry.after.map(AuditRedaction.value) ?? .null,
        ])
    }

    static func filter(_ request: HTTPRequest, principal: Principal) throws(APIError) -> AuditFilter {
        let query = request.query
        var filter = AuditFilter(app: query["app"], visibleApps: principal.apps, actor: query["actor"], action: query["action"])
        if let app = filter.app {
            try AppName.validate(app)
            guard principal.sees(app) else { throw AppScope.hidden(app) }
        }
        for (name, value) in [("actor", filter.actor), ("action", filter.action)] where (value?.unicodeScalars.count ?? 0) > 255 {
            throw .badRequest("invalid_parameter", "\(name) is longer than 255 characters")
        }
        for (name, value) in [("from", query["from"]), ("to", query["to"])] {
            guard let value else { continue }
            guard let milliseconds = Timestamp.parseMilliseconds(value) else {
                throw .badRequest("invalid_parameter", "\(name) must be an RFC 3339 time such as 2026-11-27T00:00:00Z, got \"\(value.prefix(40))\"")
            }
            if name == "from" { filter.from = milliseconds } else { filter.to = milliseconds }
        }
        return filter
    }

    static func before(_ text: String?) throws(APIError) -> Int64? {
        guard let text else { return nil }
        guard let id = Int64(text), id > 0 else { throw .badRequest("invalid_parameter", "before must be a row id from next_before, got \"\(text.prefix(40))\"") }
        return id
    }
}

/// Audit rows as the API and `watchdogd audit` print them.
public enum AuditExport {
    /// One row as one line of JSON (what `GET /v1/admin/audit.ndjson` holds).
    public static func line(_ entry: AuditEntry) -> String {
        String(decoding: (try? JSONBody.encode(AuditRoutes.view(entry))) ?? [], as: UTF8.self)
    }

    /// Runs a change made outside the server (the CLI) with its audit row pending, so the
    /// store writes the row in the change's transaction (when it changed a row). `after`:
    /// JSON text, redacted.
    public static func recording<Result>(_ store: any TelemetryStore, action: String, app: String?, actor: String, after: String? = nil,
                                         now: Int64, _ change: () throws -> Result) throws -> Result {
        let entry = AuditEntry(at: now, actor: actor, address: "local", action: action, app: app,
                               after: after.map { AuditRedaction.text(AuditRedaction.value($0)) })
        return try PendingAudit.$current.withValue(PendingAudit([entry])) { try change() }
    }
}
