import GRDB

/// Triage of issues (`Migrations+Triage.swift`).
extension SQLiteStore {
    public func issueTriage(app: String) throws -> [IssueTriageRecord] {
        try pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT app, fingerprint, resolution, resolved_version, resolved_build, next_release, resolved_at,
                       mute_until, mute_sessions, mute_baseline, note, changed_by, changed_at
                FROM issue_triage WHERE app = ? ORDER BY fingerprint
                """, arguments: [app]).map { row in
                let version: String? = row[3], build: String? = row[4]
                return IssueTriageRecord(app: row[0], fingerprint: row[1], resolution: row[2],
                                         resolvedIn: version.flatMap { version in build.map { ReleaseID(version: version, build: $0) } },
                                         nextRelease: row[5], resolvedAt: row[6], muteUntil: row[7], muteSessions: row[8], muteBaseline: row[9],
                                         note: row[10], changedBy: row[11], changedAt: row[12])
            }
        }
    }

    public func saveIssueTriage(_ record: IssueTriageRecord) throws {
        try auditedWrite { db in
            try db.execute(sql: """
                INSERT OR REPLACE INTO issue_triage (app, fingerprint, resolution, resolved_version, resolved_build, next_release, resolved_at,
                    mute_until, mute_sessions, mute_baseline, note, changed_by, changed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [record.app, record.fingerprint, record.resolution, record.resolvedIn?.version, record.resolvedIn?.build,
                                 record.nextRelease, record.resolvedAt, record.muteUntil, record.muteSessions, record.muteBaseline,
                                 record.note, record.changedBy, record.changedAt])
        }
    }
}
