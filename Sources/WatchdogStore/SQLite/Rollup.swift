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

    /// Reports counted three ways: headline, suspect (app not active) and flooded (past the
    /// per-session, per-fingerprint cap); a report is in exactly one of them.
    struct Count {
        var reports = 0
        var suspect = 0
        var flooded = 0

        mutating func add(_ report: ReportRecord) {
            if report.isSuspect { suspect += 1 } else if report.isFlooded { flooded += 1 } else { reports += 1 }
        }
    }

    struct InstallKey: Hashable {
        var release: ReleaseKey
        var install: String
    }

    struct InstallDelta {
        var channel: String?
        var idiom: String?
        var sessions = 0
        var reports = 0
        var affectedSessions = 0
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
    var affected: [[String]: Int] = [:]             // app, version, build, dimension, value: newly affected sessions
    var installs: [InstallKey: InstallDelta] = [:]
    var installKinds: [[String]: (reports: Int, affected: Int)] = [:]  // app, version, build, install id, kind
    var hourlySessions: [[String]: Int] = [:]       // app, version, build, hour

    /// Adds one new report. `newlyAffectedSession`: its session had no active report in this
    /// release before; `newIssueSession`: none of this fingerprint; `newlyAffectedValues`: the
    /// dimensions (`kind`, `screen`, …) whose value this session had no active report of before.
    mutating func add(_ report: ReportRecord, newlyAffectedSession: Bool, newIssueSession: Bool, newlyAffectedValues: [(dimension: String, value: String)]) {
        let key = ReleaseKey(app: report.app, version: report.version, build: report.build)
        let release = [report.app, report.version, report.build]
        var delta = releases[key] ?? ReleaseDelta()
        delta.seen(report.occurredAt)
        if newlyAffectedSession { delta.affectedSessions += 1 }
        if report.autoFixed { delta.autoFixed += 1 }
        if report.testCrash { delta.testCrashes += 1 }
        releases[key] = delta

        kinds[release + [report.kind], default: Count()].add(report)
        for (dimension, value) in [("screen", report.screen), ("keyboard_mode", report.keyboardMode), ("idiom", report.idiom)] {
            breakdown[release + [dimension, value ?? "", report.kind], default: Count()].add(report)
        }
        hourly[release + [report.kind, String(Self.hour(report.occurredAt))], default: Count()].add(report)
        for (dimension, value) in newlyAffectedValues {
            affected[release + [dimension, value], default: 0] += 1
        }
        if !report.isSuspect, let install = report.installID {
            let installKey = InstallKey(release: key, install: install)
            var installDelta = installs[installKey] ?? InstallDelta()
            installDelta.reports += 1
            if newlyAffectedSession { installDelta.affectedSessions += 1 }
            installs[installKey] = installDelta
            var kind = installKinds[release + [install, report.kind]] ?? (0, 0)
            if !report.isFlooded { kind.reports += 1 }
            if newlyAffectedValues.contains(where: { $0.dimension == "kind" }) { kind.affected += 1 }
            installKinds[release + [install, report.kind]] = kind
        }

        var issue = issues[release + [report.fingerprint]]
            ?? IssueDelta(kind: report.kind, screen: report.screen, viewName: report.viewName, keyboardMode: report.keyboardMode)
        issue.count.add(report)
        if newIssueSession { issue.affectedSessions += 1 }
        issue.firstSeen = min(issue.firstSeen, report.occurredAt)
        issue.lastSeen = max(issue.lastSeen, report.occurredAt)
        issues[release + [report.fingerprint]] = issue

        if !report.isSuspect, !report.isFlooded, let height = report.keyboardHeight, height.isFinite, height >= 0, height < 100_000 {
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
        hourlySessions[[session.app, session.version, session.build, String(Self.hour(session.startedAt))], default: 0] += 1
        if let install = session.installID {
            let installKey = InstallKey(release: key, install: install)
            var installDelta = installs[installKey] ?? InstallDelta()
            installDelta.sessions += 1
            installDelta.channel = session.channel ?? installDelta.channel
            installDelta.idiom = session.idiom ?? installDelta.idiom
            installs[installKey] = installDelta
        }
    }

    /// Hours since the epoch, UTC, rounding down before 1970 too.
    static func hour(_ milliseconds: Int64) -> Int64 {
        milliseconds >= 0 ? milliseconds / 3_600_000 : (milliseconds - 3_599_999) / 3_600_000
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
            INSERT INTO release_kinds (app, version, build, kind, reports, suspect_reports, flooded_reports) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT DO UPDATE SET reports = reports + excluded.reports, suspect_reports = suspect_reports + excluded.suspect_reports,
                flooded_reports = flooded_reports + excluded.flooded_reports
            """)
        try upsertCounts(breakdown, db, sql: """
            INSERT INTO release_breakdown (app, version, build, dimension, value, kind, reports, suspect_reports, flooded_reports) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT DO UPDATE SET reports = reports + excluded.reports, suspect_reports = suspect_reports + excluded.suspect_reports,
                flooded_reports = flooded_reports + excluded.flooded_reports
            """)
        try upsertCounts(hourly, db, sql: """
            INSERT INTO release_hourly (app, version, build, kind, hour, reports, suspect_reports, flooded_reports) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT DO UPDATE SET reports = reports + excluded.reports, suspect_reports = suspect_reports + excluded.suspect_reports,
                flooded_reports = flooded_reports + excluded.flooded_reports
            """)
        let issue = try db.cachedStatement(sql: """
            INSERT INTO issue_releases (app, version, build, fingerprint, kind, screen, view_name, keyboard_mode,
                                        reports, suspect_reports, flooded_reports, affected_sessions, first_seen, last_seen)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT DO UPDATE SET
                reports = reports + excluded.reports,
                suspect_reports = suspect_reports + excluded.suspect_reports,
                flooded_reports = flooded_reports + excluded.flooded_reports,
                affected_sessions = affected_sessions + excluded.affected_sessions,
                first_seen = min(first_seen, excluded.first_seen),
                last_seen = max(last_seen, excluded.last_seen)
            """)
        for (key, delta) in issues {
            try issue.execute(arguments: Self.arguments(key, [
                delta.kind, delta.screen, delta.viewName, delta.keyboardMode, delta.count.reports, delta.count.suspect,
                delta.count.flooded, delta.affectedSessions, delta.firstSeen, delta.lastSeen,
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
        try writeCohorts(db)
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

    /// Affected sessions per dimension value, per install, and session starts per hour.
    private func writeCohorts(_ db: Database) throws {
        if !affected.isEmpty {
            let statement = try db.cachedStatement(sql: """
                INSERT INTO release_affected (app, version, build, dimension, value, affected_sessions) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT DO UPDATE SET affected_sessions = affected_sessions + excluded.affected_sessions
                """)
            for (key, count) in affected { try statement.execute(arguments: Self.arguments(key, [count])) }
        }
        if !installs.isEmpty {
            let statement = try db.cachedStatement(sql: """
                INSERT INTO release_installs (app, version, build, install_id, channel, idiom, sessions, reports, affected_sessions)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT DO UPDATE SET
                    channel = coalesce(excluded.channel, channel),
                    idiom = coalesce(excluded.idiom, idiom),
                    sessions = sessions + excluded.sessions,
                    reports = reports + excluded.reports,
                    affected_sessions = affected_sessions + excluded.affected_sessions
                """)
            for (key, delta) in installs {
                try statement.execute(arguments: [key.release.app, key.release.version, key.release.build, key.install,
                                                  delta.channel, delta.idiom, delta.sessions, delta.reports, delta.affectedSessions])
            }
        }
        if !installKinds.isEmpty {
            let statement = try db.cachedStatement(sql: """
                INSERT INTO release_install_kinds (app, version, build, install_id, kind, reports, affected_sessions) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT DO UPDATE SET reports = reports + excluded.reports, affected_sessions = affected_sessions + excluded.affected_sessions
                """)
            for (key, count) in installKinds { try statement.execute(arguments: Self.arguments(key, [count.reports, count.affected])) }
        }
        if !hourlySessions.isEmpty {
            let statement = try db.cachedStatement(sql: """
                INSERT INTO release_hourly_sessions (app, version, build, hour, sessions) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT DO UPDATE SET sessions = sessions + excluded.sessions
                """)
            for (key, count) in hourlySessions { try statement.execute(arguments: [key[0], key[1], key[2], Int64(key[3]) ?? 0, count]) }
        }
    }

    private func upsertCounts(_ rows: [[String]: Count], _ db: Database, sql: String) throws {
        guard !rows.isEmpty else { return }
        let statement = try db.cachedStatement(sql: sql)
        for (key, count) in rows {
            try statement.execute(arguments: Self.arguments(key, [count.reports, count.suspect, count.flooded]))
        }
    }

    private static func arguments(_ key: [String], _ values: [(any DatabaseValueConvertible)?]) -> StatementArguments {
        StatementArguments(key.map { Optional($0 as any DatabaseValueConvertible) } + values)
    }
}
