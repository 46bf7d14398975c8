import GRDB

extension SQLiteStore {
    public func ingest(_ batches: [IngestBatch]) throws -> [IngestCounts] {
        try pool.writeWithoutTransaction { db in
            var counts: [IngestCounts] = []
            try db.inTransaction(.immediate) {
                counts = []
                var rollup = Rollup()
                for batch in batches {
                    switch batch {
                    case .reports(let reports, let receivedAt):
                        counts.append(try insert(reports, receivedAt: receivedAt, into: &rollup, db))
                    case .sessions(let sessions, let receivedAt):
                        counts.append(try insert(sessions, receivedAt: receivedAt, into: &rollup, db))
                    }
                }
                try rollup.write(db)
                return .commit
            }
            return counts
        }
    }

    private func insert(_ reports: [ReportRecord], receivedAt: Int64, into rollup: inout Rollup, _ db: Database) throws -> IngestCounts {
        let statement = try db.cachedStatement(sql: """
            INSERT INTO reports (id, app, version, build, channel, kind, occurred_at, received_at,
                                 session_id, install_id, suspect, screen, body)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO NOTHING
            """)
        let affected = try db.cachedStatement(sql: """
            INSERT INTO release_affected_sessions (app, version, build, session_id) VALUES (?, ?, ?, ?)
            ON CONFLICT DO NOTHING
            """)
        var counts = IngestCounts(accepted: 0, duplicates: 0)
        for report in reports {
            try statement.execute(arguments: [
                report.id, report.app, report.version, report.build, report.channel, report.kind,
                report.occurredAt, receivedAt, report.sessionID, report.installID, report.isSuspect,
                report.screen, report.body,
            ])
            guard db.changesCount == 1 else {
                counts.duplicates += 1
                continue
            }
            counts.accepted += 1
            var newlyAffected = false
            if !report.isSuspect, let session = report.sessionID {
                try affected.execute(arguments: [report.app, report.version, report.build, session])
                newlyAffected = db.changesCount == 1
            }
            rollup.add(report, newlyAffectedSession: newlyAffected)
        }
        return counts
    }

    private func insert(_ sessions: [SessionRecord], receivedAt: Int64, into rollup: inout Rollup, _ db: Database) throws -> IngestCounts {
        let statement = try db.cachedStatement(sql: """
            INSERT INTO sessions (id, app, version, build, channel, install_id, started_at, received_at, body)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO NOTHING
            """)
        var counts = IngestCounts(accepted: 0, duplicates: 0)
        for session in sessions {
            try statement.execute(arguments: [
                session.id, session.app, session.version, session.build, session.channel,
                session.installID, session.startedAt, receivedAt, session.body,
            ])
            if db.changesCount == 1 {
                counts.accepted += 1
                rollup.add(session)
            } else {
                counts.duplicates += 1
            }
        }
        return counts
    }
}

/// Counts of one transaction, summed in memory and written as one upsert per release and kind.
private struct Rollup {
    struct ReleaseKey: Hashable {
        var app: String
        var version: String
        var build: String
    }
    struct KindKey: Hashable {
        var release: ReleaseKey
        var kind: String
    }
    struct ReleaseDelta {
        var sessions = 0
        var affectedSessions = 0
        var autoFixed = 0
        var testCrashes = 0
        var firstSeen = Int64.max
        var lastSeen = Int64.min

        mutating func seen(_ time: Int64) {
            firstSeen = min(firstSeen, time)
            lastSeen = max(lastSeen, time)
        }
    }

    var releases: [ReleaseKey: ReleaseDelta] = [:]
    var kinds: [KindKey: (reports: Int, suspect: Int)] = [:]

    mutating func add(_ report: ReportRecord, newlyAffectedSession: Bool) {
        let key = ReleaseKey(app: report.app, version: report.version, build: report.build)
        var delta = releases[key] ?? ReleaseDelta()
        delta.seen(report.occurredAt)
        if newlyAffectedSession { delta.affectedSessions += 1 }
        if report.autoFixed { delta.autoFixed += 1 }
        if report.testCrash { delta.testCrashes += 1 }
        releases[key] = delta
        let kindKey = KindKey(release: key, kind: report.kind)
        var kindDelta = kinds[kindKey] ?? (0, 0)
        if report.isSuspect { kindDelta.suspect += 1 } else { kindDelta.reports += 1 }
        kinds[kindKey] = kindDelta
    }

    mutating func add(_ session: SessionRecord) {
        let key = ReleaseKey(app: session.app, version: session.version, build: session.build)
        var delta = releases[key] ?? ReleaseDelta()
        delta.sessions += 1
        delta.seen(session.startedAt)
        releases[key] = delta
    }

    func write(_ db: Database) throws {
        let release = try db.cachedStatement(sql: """
            INSERT INTO releases (app, version, build, sessions, affected_sessions, auto_fixed, test_crashes, first_seen, last_seen)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (app, version, build) DO UPDATE SET
                sessions = sessions + excluded.sessions,
                affected_sessions = affected_sessions + excluded.affected_sessions,
                auto_fixed = auto_fixed + excluded.auto_fixed,
                test_crashes = test_crashes + excluded.test_crashes,
                first_seen = min(first_seen, excluded.first_seen),
                last_seen = max(last_seen, excluded.last_seen)
            """)
        for (key, delta) in releases {
            try release.execute(arguments: [
                key.app, key.version, key.build, delta.sessions, delta.affectedSessions,
                delta.autoFixed, delta.testCrashes, delta.firstSeen, delta.lastSeen,
            ])
        }
        let kind = try db.cachedStatement(sql: """
            INSERT INTO release_kinds (app, version, build, kind, reports, suspect_reports)
            VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (app, version, build, kind) DO UPDATE SET
                reports = reports + excluded.reports,
                suspect_reports = suspect_reports + excluded.suspect_reports
            """)
        for (key, delta) in kinds {
            try kind.execute(arguments: [key.release.app, key.release.version, key.release.build, key.kind, delta.reports, delta.suspect])
        }
    }
}
