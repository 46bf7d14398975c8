import ArgumentParser
import Foundation
import WatchdogServer
import WatchdogStore
import WatchdogWire

/// `watchdogd audit`: the audit log, newest first, one JSON object a line (as
/// `GET /v1/admin/audit.ndjson`), read from the store directly.
struct Audit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the audit log, newest first, as NDJSON.",
        discussion: "Every change (tokens, apps and keys, admission, attestation, releases, config, rollouts and the guard's steps, alert rules and hooks, sign-ins) is one row. Works while `serve` runs."
    )

    @OptionGroup var common: CommonOptions

    @Option(help: "Rows of this app only.")
    var app: String?

    @Option(help: "Rows of this actor (a token's name, guard, cli:<user>) only.")
    var actor: String?

    @Option(help: "Rows of this action (e.g. signin, token.add, \"PATCH /v1/admin/apps/{app}/config\") only.")
    var action: String?

    @Option(help: "Rows at or after this RFC 3339 time.")
    var since: String?

    @Option(help: "At most this many rows (default 1000).")
    var limit: Int = 1000

    func validate() throws {
        if let since, Timestamp.parseMilliseconds(since) == nil { throw ValidationError("--since must be an RFC 3339 time such as 2026-11-27T00:00:00Z") }
        guard limit > 0 else { throw ValidationError("--limit must be at least 1") }
    }

    func run() throws {
        let store = try common.openStore()
        let filter = AuditFilter(app: app, actor: actor, action: action, from: since.flatMap(Timestamp.parseMilliseconds))
        var before: Int64?
        var printed = 0
        while printed < limit {
            let rows = try store.auditEntries(filter, before: before, limit: min(1000, limit - printed))
            for row in rows { emit(AuditExport.line(row)) }
            printed += rows.count
            guard let last = rows.last, rows.count == min(1000, limit - printed + rows.count) else { break }
            before = last.id
        }
        try store.close()
    }
}

/// Who the CLI's changes are by: `cli:<the user running it>`.
func cliActor() -> String {
    "cli:" + (ProcessInfo.processInfo.environment["USER"] ?? ProcessInfo.processInfo.environment["LOGNAME"] ?? "unknown")
}

/// `text` as a JSON string literal.
func jsonQuoted(_ text: String) -> String {
    (try? JSONEncoder().encode(text)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
}

/// Runs a CLI change with its audit row (`action`, by `cli:<user>`, address `local`), written
/// by the store in the change's transaction.
func audited<Result>(_ store: any TelemetryStore, _ action: String, app: String?, after: String? = nil, _ change: () throws -> Result) throws -> Result {
    try AuditExport.recording(store, action: action, app: app, actor: cliActor(), after: after, now: WatchdogServer.systemClock(), change)
}
