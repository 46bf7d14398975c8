import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// `POST /v1/apps/{app}/issues/{fingerprint}/resolve|mute|reopen`: triage of an issue, by
/// an operator or admin of the app, with a note. Each is one row of the audit log, written in
/// the change's transaction (`issue.resolve`, `issue.mute`, `issue.reopen`, with the triage
/// before and after).
struct TriageRoutes: Sendable {
    let lookup: ReleaseLookup
    let clock: @Sendable () -> Int64

    /// The longest note, in characters.
    static let noteLength = 1000
    /// The longest mute by time: a year, in hours.
    static let longestMuteHours = 366 * 24
    static let mostMuteSessions = 1_000_000_000

    func act(_ request: HTTPRequest, action: String, app: String, fingerprint: String, principal: Principal) throws(APIError) -> HTTPResponse {
        let allowed = try Self.fields(of: action)
        // The issue first (404), then its body: what is asked of an issue that does not exist
        // is not worth a 400.
        try Self.checkFingerprint(fingerprint)
        let releases = try lookup.releases(of: app)
        guard try IssueTriage(lookup: lookup).presence(app: app, fingerprints: [fingerprint], releases: releases)[fingerprint] != nil else {
            throw .notFound("app \(app) has no issue \(fingerprint) in its listed releases")
        }
        let fields = request.body.isEmpty ? [:] : try AlertRoutes.object(request, example: #"{"note": "fixed by the new layout"}"#, allowed: allowed)
        PendingAudit.current?.update { $0.action = "issue.\(action)" }
        return JSONBody.response(try change(action: action, app: app, fingerprint: fingerprint, fields: fields, actor: principal.name))
    }

    /// The fields an action's body may have, or 404 for an action that does not exist.
    static func fields(of action: String) throws(APIError) -> Set<String> {
        switch action {
        case "resolve": ["note", "release", "next_release"]
        case "mute": ["note", "hours", "sessions"]
        case "reopen": ["note"]
        default: throw .notFound("no issue action \(action.prefix(40)); the actions are mute, reopen and resolve")
        }
    }

    /// Makes the change (the API's and the CLI's): checks the fields, stores the row with the
    /// pending audit row (its before and after set here), returns the triage after it.
    func change(action: String, app: String, fingerprint: String, fields: [String: JSONValue], actor: String) throws(APIError) -> TriageView {
        _ = try Self.fields(of: action)
        try Self.checkFingerprint(fingerprint)
        let note = try Self.note(try AlertRoutes.string(fields, "note") ?? "")
        let releases = try lookup.releases(of: app)
        let triage = IssueTriage(lookup: lookup)
        let seen = try triage.presence(app: app, fingerprints: [fingerprint], releases: releases)[fingerprint] ?? []
        guard !seen.isEmpty else { throw .notFound("app \(app) has no issue \(fingerprint) in its listed releases") }
        let now = clock()
        let store = lookup.store
        let before = try storeCall { try store.issueTriage(app: app) }.first { $0.fingerprint == fingerprint }
        var record = IssueTriageRecord(app: app, fingerprint: fingerprint, resolution: before?.resolution ?? "open",
                                       resolvedIn: before?.resolvedIn, nextRelease: before?.nextRelease ?? false, resolvedAt: before?.resolvedAt,
                                       note: note, changedBy: actor, changedAt: now)
        switch action {
        case "resolve":
            let next = try Self.flag(fields, "next_release")
            record.resolution = "resolved"
            record.nextRelease = next
            record.resolvedAt = now
            if let text = try AlertRoutes.string(fields, "release") {
                guard !next else { throw .badRequest("invalid_field", "give release or next_release, not both") }
                record.resolvedIn = try ReleaseResolver(releases: releases).resolve(text, parameter: "release").release
            } else if next {
                // The fix ships in the next release listed: any listed after today's newest counts.
                record.resolvedIn = ReleaseOrder.sorted(releases, by: \.release).last?.release
            } else {
                // Fixed as of the newest listed release it was seen in.
                record.resolvedIn = seen.last?.release.release
            }
        case "mute":
            let hours = try AlertRoutes.whole(fields, "hours")
            if let hours, !(1...Self.longestMuteHours).contains(hours) {
                throw .badRequest("invalid_field", "hours must be a whole number from 1 to \(Self.longestMuteHours) (a year), got \(hours)")
            }
            let until = hours.map { now + Int64($0) * 3_600_000 }
            let sessions = try AlertRoutes.whole(fields, "sessions")
            if let sessions, !(1...Self.mostMuteSessions).contains(sessions) {
                throw .badRequest("invalid_field", "sessions must be a whole number from 1 to \(Self.mostMuteSessions), got \(sessions)")
            }
            guard until != nil || sessions != nil else {
                throw .badRequest("invalid_field", "a mute needs hours or sessions (more affected sessions), or both: it ends at the first")
            }
            record.muteUntil = until
            record.muteSessions = sessions
            record.muteBaseline = seen.reduce(0) { $0 + $1.row.affectedSessions }
        default:
            record.resolution = "open"
            record.resolvedIn = nil
            record.nextRelease = false
            record.resolvedAt = nil
        }
        let beforeView = TriageView(before.map { IssueTriage.state($0, seen: seen, now: now) } ?? .untouched, fingerprint: fingerprint)
        let after = TriageView(IssueTriage.state(record, seen: seen, now: now), fingerprint: fingerprint)
        AuditNote.set(before: before == nil ? nil : Self.value(beforeView), after: Self.value(after))
        try storeCall { try store.saveIssueTriage(record) }
        return after
    }

    static func checkFingerprint(_ fingerprint: String) throws(APIError) {
        guard Fingerprint.isValid(fingerprint) else {
            throw .badRequest("invalid_parameter", "fingerprint must look like fp_0123456789abcdef, got \(fingerprint.prefix(40))")
        }
    }

    static func value(_ view: TriageView) -> JSONValue? {
        (try? JSONBody.encode(view)).flatMap(JSONValue.parse)
    }

    /// A note: text of at most `noteLength` characters; line breaks and tabs are allowed, other
    /// control characters are not (it is shown as text, never markup, wherever it appears).
    static func note(_ text: String) throws(APIError) -> String {
        guard text.unicodeScalars.count <= noteLength else { throw .badRequest("invalid_field", "note is longer than \(noteLength) characters") }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" && $0 != "\t" }) else {
            throw .badRequest("invalid_field", "note must be text: line breaks and tabs, no other control characters")
        }
        return text
    }

    static func flag(_ fields: [String: JSONValue], _ name: String) throws(APIError) -> Bool {
        switch fields[name] {
        case nil: return false
        case .bool(let value)?: return value
        case let other?: throw .badRequest("invalid_field", "\(name) must be true or false, got \(other.typeName)")
        }
    }
}

/// `watchdogd issues resolve|mute|reopen` on the store directly: the API's change, by the CLI's
/// actor, with its audit row (`issue.resolve`, …) in the change's transaction.
public enum IssueTriageCommand {
    /// The change's triage after it, as the API's JSON.
    public static func run(store: any TelemetryStore, action: String, app: String, fingerprint: String, note: String?, release: String? = nil,
                           nextRelease: Bool = false, hours: Int? = nil, sessions: Int? = nil, actor: String, now: Int64) throws -> String {
        var fields: [String: JSONValue] = [:]
        if let note { fields["note"] = .string(note) }
        if let release { fields["release"] = .string(release) }
        if nextRelease { fields["next_release"] = .bool(true) }
        if let hours { fields["hours"] = .number(Double(hours)) }
        if let sessions { fields["sessions"] = .number(Double(sessions)) }
        let routes = TriageRoutes(lookup: ReleaseLookup(store: store, admission: AdmissionService(store: store)), clock: { now })
        return try AuditExport.recording(store, action: "issue.\(action)", app: app, actor: actor, now: now) {
            let view = try routes.change(action: action, app: app, fingerprint: fingerprint, fields: fields, actor: actor)
            return String(decoding: (try? JSONBody.encode(view)) ?? [], as: UTF8.self)
        }
    }
}
