import PostgresClient

/// Triage of issues — the same behaviour as `SQLiteStore+Triage.swift`.
extension PostgresStore {
    public func issueTriage(app: String) throws -> [IssueTriageRecord] {
        try auditedConnection { connection in
            try connection.query("""
                SELECT app, fingerprint, resolution, resolved_version, resolved_build, next_release, resolved_at,
                       mute_until, mute_sessions, mute_baseline, note, changed_by, changed_at
                FROM issue_triage WHERE app = $1 ORDER BY fingerprint COLLATE "C"
                """, [app]).map { row in
                IssueTriageRecord(app: row.text(0), fingerprint: row.text(1), resolution: row.text(2),
                                  resolvedIn: row.optionalText(3).flatMap { version in row.optionalText(4).map { ReleaseID(version: version, build: $0) } },
                                  nextRelease: row.bool(5), resolvedAt: row.optionalInteger(6), muteUntil: row.optionalInteger(7),
                                  muteSessions: row.optionalInteger(8).map { Int($0) }, muteBaseline: row.int(9),
                                  note: row.text(10), changedBy: row.text(11), changedAt: row.integer(12))
            }
        }
    }

    public func saveIssueTriage(_ record: IssueTriageRecord) throws {
        _ = try auditedTransaction { connection in
            try connection.query("""
                INSERT INTO issue_triage (app, fingerprint, resolution, resolved_version, resolved_build, next_release, resolved_at,
                    mute_until, mute_sessions, mute_baseline, note, changed_by, changed_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
                ON CONFLICT (app, fingerprint) DO UPDATE SET resolution = excluded.resolution, resolved_version = excluded.resolved_version,
                    resolved_build = excluded.resolved_build, next_release = excluded.next_release, resolved_at = excluded.resolved_at,
                    mute_until = excluded.mute_until, mute_sessions = excluded.mute_sessions, mute_baseline = excluded.mute_baseline,
                    note = excluded.note, changed_by = excluded.changed_by, changed_at = excluded.changed_at
                """, [record.app, record.fingerprint, record.resolution, record.resolvedIn?.version, record.resolvedIn?.build,
                      record.nextRelease, record.resolvedAt, record.muteUntil, record.muteSessions.map { Int64($0) }, Int64(record.muteBaseline),
                      record.note, record.changedBy, record.changedAt])
        }
    }
}
