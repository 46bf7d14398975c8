import GRDB

/// The counts of one transaction, summed in memory and written as one upsert per row they
/// touch, in the same transaction as the reports — so every stats query reads small tables and
/// always agrees with the reports table.
struct Rollup {
    struct ReleaseKey: Hashable {
        var app: String
        var version: String
        var build: String
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

    struct Count {
        var reports = 0
        var suspect = 0

        mutating func add(suspect isSuspect: Bool) {
            if isSuspect { suspect += 1 } else { reports += 1 }
        }
    }

    struct IssueDelta {
        var kind: String
        var screen: String?
        var viewName: String?
        var keyboardMode: String?
        var count = Count()
        var affectedSessions = 0
        var firstSeen = Int64.max
        var lastSeen = Int64.min
    }

    var releases: [ReleaseKey: ReleaseDelta] = [:]
    var kinds: [[String]: Count] = [:]              // app, version, build, kind
    var breakdown: [[String]: Count] = [:]          // app, version, build, dimension, value, kind
    var hourly: [[String]: Count] = [:]             // app, version, build, kind, hour
    var issues: [[String]: IssueDelta] = [:]        // app, version, build, fingerprint
    var heights: [[String]: (reports: Int, windowSized: Int)] = [:]  // app, version, build, model, mode, input mode, height
    var idiomSessions: [[String]: Int] = [:]        // app, version, build, idiom
    var testCrashes: [[String]: Int] = [:]          // app, install id, day

    mutating func add(_ report: ReportRecord, newlyAffectedSession: Bool, newIssueSession: Bool) {
        let key = ReleaseKey(app: report.app, version: report.version, build: report.build)
        let release = [report.app, report.version, report.build]
        var delta = releases[key] ?? ReleaseDelta()
        delta.seen(report.occurredAt)
        if newlyAffectedSession { delta.affectedSessions += 1 }
        if report.autoFixed { delta.autoFixed += 1 }
        if report.testCrash { delta.testCrashes += 1 }
        releases[key] = delta

        kinds[release + [report.kind], default: Count()].add(suspect: report.isSuspect)
        for (dimension, value) in [("screen", report.screen), ("keyboard_mode", report.keyboardMode), ("idiom", report.idiom)] {
            breakdown[release + [dimension, value ?? "", report.kind], default: Count()].add(suspect: report.isSuspect)
        }
        let hour = report.occurredAt >= 0 ? report.occurredAt / 3_600_000 : (report.occurredAt - 3_599_999) / 3_600_000
        hourly[release + [report.kind, String(hour)], default: Count()].add(suspect: report.isSuspect)

        var issue = issues[release + [report.fingerprint]]
            ?? IssueDelta(kind: report.kind, screen: report.screen, viewName: report.viewName, keyboardMode: report.keyboardMode)
        issue.count.add(suspect: report.isSuspect)
        if newIssueSession { issue.affectedSessions += 1 }
        issue.firstSeen = min(issue.firstSeen, report.occurredAt)
        issue.lastSeen = max(issue.lastSeen, report.occurredAt)
        issues[release + [report.fingerprint]] = issue

        if !report.isSuspect, let height = report.keyboardHeight, height.isFinite, height >= 0, height < 100_000 {
            let windowSized = (report.windowHeight ?? 0) > 0 && height >= 0.9 * (report.windowHeight ?? 0)
            let heightKey = release + [report.deviceModel ?? "", report.keyboardMode ?? "", report.inputMode ?? "", String(Int(height.rounded()))]
            var bucket = heights[heightKey] ?? (0, 0)
            bucket.reports += 1
            if windowSized { bucket.windowSized += 1 }
            heights[heightKey] = bucket
        }
    }

    mutating func add(_ session: SessionRecord) {
        let key = ReleaseKey(app: session.app, version: session.version, build: session.build)
        var delta = releases[key] ?? ReleaseDelta()
        delta.sessions += 1
        delta.seen(session.startedAt)
        releases[key] = delta
        idiomSessions[[session.app, session.version, session.build, session.idiom ?? ""], default: 0] += 1
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
            try release.execute(arguments: [key.app, key.version, key.build, delta.sessions, delta.affectedSessions,
                                             delta.autoFixed, delta.testCrashes, delta.firstSeen, delta.lastSeen])
        }
        try upsertCounts(kinds, db, sql: """
            INSERT INTO release_kinds (app, version, build, kind, reports, suspect_reports) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT DO UPDATE SET reports = reports + excluded.reports, suspect_reports = suspect_reports + excluded.suspect_reports
            """)
        try upsertCounts(breakdown, db, sql: """
            INSERT INTO release_breakdown (app, version, build, dimension, value, kind, reports, suspect_reports) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT DO UPDATE SET reports = reports + excluded.reports, suspect_reports = suspect_reports + excluded.suspect_reports
            """)
        try upsertCounts(hourly, db, sql: """
            INSERT INTO release_hourly (app, version, build, kind, hour, reports, suspect_reports) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT DO UPDATE SET reports = reports + excluded.reports, suspect_reports = suspect_reports + excluded.suspect_reports
            """)
        let issue = try db.cachedStatement(sql: """
            INSERT INTO issue_releases (app, version, build, fingerprint, kind, screen, view_name, keyboard_mode,
                                        reports, suspect_reports, affected_sessions, first_seen, last_seen)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT DO UPDATE SET
                reports = reports + excluded.reports,
                suspect_reports = suspect_reports + excluded.suspect_reports,
                affected_sessions = affected_sessions + excluded.affected_sessions,
                first_seen = min(first_seen, excluded.first_seen),
                last_seen = max(last_seen, excluded.last_seen)
            """)
        for (key, delta) in issues {
            try issue.execute(arguments: Self.arguments(key, [
                delta.kind, delta.screen, delta.viewName, delta.keyboardMode, delta.count.reports, delta.count.suspect,
                delta.affectedSessions, delta.firstSeen, delta.lastSeen,
            ]))
        }
        let height = try db.cachedStatement(sql: """
            INSERT INTO keyboard_heights (app, version, build, model, mode, input_mode, height, reports, window_sized) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT DO UPDATE SET reports = reports + excluded.reports, window_sized = window_sized + excluded.window_sized
            """)
        for (key, bucket) in heights {
            try height.execute(arguments: Self.arguments(key, [bucket.reports, bucket.windowSized]))
        }
        let idiom = try db.cachedStatement(sql: """
            INSERT INTO release_idiom_sessions (app, version, build, idiom, sessions) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT DO UPDATE SET sessions = sessions + excluded.sessions
            """)
        for (key, sessions) in idiomSessions {
            try idiom.execute(arguments: Self.arguments(key, [sessions]))
        }
        if !testCrashes.isEmpty {
            let crashes = try db.cachedStatement(sql: """
                INSERT INTO test_crash_daily (app, install_id, day, crashes) VALUES (?, ?, ?, ?)
                ON CONFLICT DO UPDATE SET crashes = crashes + excluded.crashes
                """)
            for (key, count) in testCrashes {
                try crashes.execute(arguments: [key[0], key[1], Int64(key[2]) ?? 0, count])
            }
        }
    }

    private func upsertCounts(_ rows: [[String]: Count], _ db: Database, sql: String) throws {
        guard !rows.isEmpty else { return }
        let statement = try db.cachedStatement(sql: sql)
        for (key, count) in rows {
            try statement.execute(arguments: Self.arguments(key, [count.reports, count.suspect]))
        }
    }

    private static func arguments(_ key: [String], _ values: [(any DatabaseValueConvertible)?]) -> StatementArguments {
        StatementArguments(key.map { Optional($0 as any DatabaseValueConvertible) } + values)
    }
}
