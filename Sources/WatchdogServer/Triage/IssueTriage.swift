import WatchdogStore
import WatchdogWire

/// An issue's triage state now: what a person said (`IssueTriageRecord`) read against the
/// app's **listed** releases (declared or admitted: README, "Releases: declared, admitted,
/// unlisted"). A resolved issue with headline reports in a listed release after the one it was
/// resolved in is `regressed`; releases a client posted that were not admitted are never looked
/// at, so the public ingest key cannot regress an issue, nor fire `issue_regressed`, with a
/// forged release name. A mute is on top of the resolution and hides it while it lasts.
struct TriageState: Sendable {
    /// `open`, `resolved`, `regressed` or `muted`.
    var state: String
    var record: IssueTriageRecord?
    /// The first listed release after the resolution with headline reports of the issue.
    var regressedIn: ReleaseStats?
    /// Affected sessions of the issue in every listed release now.
    var affectedSessions: Int

    /// Open, with nothing said about it.
    static let untouched = TriageState(state: "open", record: nil, regressedIn: nil, affectedSessions: 0)
}

/// Reads triage states: the stored rows, and each triaged fingerprint's rows in the listed
/// releases (one store read per listed release for all of them at once).
struct IssueTriage: Sendable {
    let lookup: ReleaseLookup

    /// States of the app's triaged issues at `now`, by fingerprint (untriaged ones are absent:
    /// `open`). `releases`: the listed releases, any order.
    func states(app: String, releases: [ReleaseStats], now: Int64) throws(APIError) -> [String: TriageState] {
        let store = lookup.store
        let records = try storeCall { try store.issueTriage(app: app) }
        guard !records.isEmpty else { return [:] }
        let seen = try presence(app: app, fingerprints: records.map(\.fingerprint), releases: releases)
        var states: [String: TriageState] = [:]
        for record in records {
            states[record.fingerprint] = Self.state(record, seen: seen[record.fingerprint] ?? [], now: now)
        }
        return states
    }

    /// Each fingerprint's rows in the listed releases, oldest release first (releases without
    /// headline reports of it are left out).
    func presence(app: String, fingerprints: [String], releases: [ReleaseStats]) throws(APIError) -> [String: [(release: ReleaseStats, row: IssueRow)]] {
        let store = lookup.store
        var seen: [String: [(release: ReleaseStats, row: IssueRow)]] = [:]
        for release in ReleaseOrder.sorted(releases, by: \.release) {
            for row in try storeCall({ try store.issues(app: app, release: release.release, fingerprints: fingerprints) }) where row.reports > 0 {
                seen[row.fingerprint, default: []].append((release, row))
            }
        }
        return seen
    }

    /// The state of one record given where its issue was seen (oldest listed release first).
    static func state(_ record: IssueTriageRecord, seen: [(release: ReleaseStats, row: IssueRow)], now: Int64) -> TriageState {
        let affected = seen.reduce(0) { $0 + $1.row.affectedSessions }
        var state = TriageState(state: record.resolution == "resolved" ? "resolved" : "open", record: record, regressedIn: nil, affectedSessions: affected)
        if record.resolution == "resolved", let anchor = record.resolvedIn {
            state.regressedIn = seen.first { ReleaseOrder.isOlder(anchor, $0.release.release) }?.release
            if state.regressedIn != nil { state.state = "regressed" }
        }
        if isMuted(record, affectedSessions: affected, now: now) { state.state = "muted" }
        return state
    }

    /// A mute lasts until its time, and until its number of more affected sessions, whichever
    /// comes first.
    static func isMuted(_ record: IssueTriageRecord, affectedSessions: Int, now: Int64) -> Bool {
        guard record.muteUntil != nil || record.muteSessions != nil else { return false }
        if let until = record.muteUntil, now >= until { return false }
        if let sessions = record.muteSessions, affectedSessions >= record.muteBaseline + sessions { return false }
        return true
    }
}

/// An issue's triage as the API shows it (`triage` of an issue, the answer of a triage action).
struct TriageView: Encodable, Equatable {
    var fingerprint: String
    var state: String
    var resolution: String
    @NullWhenAbsent var resolvedIn: String? = nil
    var nextRelease: Bool
    @NullWhenAbsent var resolvedAt: String? = nil
    @NullWhenAbsent var regressedIn: String? = nil
    @NullWhenAbsent var mutedUntil: String? = nil
    @NullWhenAbsent var mutedForSessions: Int? = nil
    /// Affected sessions still to come before a count mute ends.
    @NullWhenAbsent var mutedSessionsLeft: Int? = nil
    var affectedSessions: Int
    var note: String
    var changedBy: String
    var changedAt: String

    init(_ state: TriageState, fingerprint: String) {
        self.fingerprint = fingerprint
        self.state = state.state
        let record = state.record
        resolution = record?.resolution ?? "open"
        resolvedIn = record?.resolvedIn?.text
        nextRelease = record?.nextRelease ?? false
        resolvedAt = record?.resolvedAt.map { Timestamp.format(milliseconds: $0) }
        regressedIn = state.regressedIn?.release.text
        mutedUntil = record?.muteUntil.map { Timestamp.format(milliseconds: $0) }
        mutedForSessions = record?.muteSessions
        if let record, let sessions = record.muteSessions { mutedSessionsLeft = max(0, record.muteBaseline + sessions - state.affectedSessions) }
        affectedSessions = state.affectedSessions
        note = record?.note ?? ""
        changedBy = record?.changedBy ?? ""
        changedAt = record.map { Timestamp.format(milliseconds: $0.changedAt) } ?? ""
    }

    enum CodingKeys: String, CodingKey {
        case fingerprint, state, resolution, note
        case resolvedIn = "resolved_in"
        case nextRelease = "next_release"
        case resolvedAt = "resolved_at"
        case regressedIn = "regressed_in"
        case mutedUntil = "muted_until"
        case mutedForSessions = "muted_for_sessions"
        case mutedSessionsLeft = "muted_sessions_left"
        case affectedSessions = "affected_sessions"
        case changedBy = "changed_by"
        case changedAt = "changed_at"
    }
}

extension TriageView: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("affected_sessions", affectedSessions)
            json.member("changed_at", changedAt)
            json.member("changed_by", changedBy)
            json.member("fingerprint", fingerprint)
            json.member("muted_for_sessions", mutedForSessions)
            json.member("muted_sessions_left", mutedSessionsLeft)
            json.member("muted_until", mutedUntil)
            json.member("next_release", nextRelease)
            json.member("note", note)
            json.member("regressed_in", regressedIn)
            json.member("resolution", resolution)
            json.member("resolved_at", resolvedAt)
            json.member("resolved_in", resolvedIn)
            json.member("state", state)
        }
    }
}
