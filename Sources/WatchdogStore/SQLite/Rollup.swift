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
        /// Session starts held apart (`SessionMarks`), and reports of sessions without a counted start.
        var implausibleSessions = 0
        var unknownSessionReports = 0
        var firstSeen = Int64.max
        var lastSeen = Int64.min
        /// When the newest of its rows arrived (the server's clock): retention deletes an
        /// unlisted release once every raw row of it is past the window.
        var lastReceived = Int64.min

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

    struct InstallDelta {
        var channel: String?
        var idiom: String?
        /// The network of its first counted session start in this transaction.
        var network: String?
        var sessions = 0
        var reports = 0
        var affectedSessions = 0
        /// Of those, the sessions whose start carried the install's owning key's assertion.
        var attestedSessions = 0
        var attestedAffectedSessions = 0
    }

    /// One install's reports of one kind, and its sessions newly affected by the kind.
    struct InstallKindDelta {
        var reports = 0
        var affected = 0
        var attestedAffected = 0
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

    /// The releases this transaction touches, numbered in order of first appearance: every
    /// key below names its release by that number, so a report hashes app, version and build
    /// once (and not at all when it has the previous report's release).
    private(set) var releaseKeys: [ReleaseKey] = []
    private var releaseNumbers: [ReleaseKey: Int] = [:]
    private var lastRelease: (key: ReleaseKey, number: Int)?

    struct KindKey: Hashable { var release: Int; var kind: String }
    struct BreakdownKey: Hashable { var release: Int; var dimension: String; var value: String; var kind: String }
    struct HourKey: Hashable { var release: Int; var kind: String; var hour: Int64 }
    struct IssueKey: Hashable { var release: Int; var fingerprint: String }
    struct HeightKey: Hashable { var release: Int; var model: String; var mode: String; var inputMode: String; var height: Int }
    struct ValueKey: Hashable { var release: Int; var dimension: String; var value: String }
    struct InstallKey: Hashable { var release: Int; var install: String }
    struct InstallKindKey: Hashable { var release: Int; var install: String; var kind: String }
    struct ReleaseHourKey: Hashable { var release: Int; var hour: Int64 }
    struct HourSessions { var sessions = 0; var affected = 0; var attested = 0 }
    struct TestCrashKey: Hashable { var app: String; var install: String; var day: Int64 }

    var releases: [ReleaseDelta] = []
    var kinds: [KindKey: Count] = [:]
    var breakdown: [BreakdownKey: Count] = [:]
    var hourly: [HourKey: Count] = [:]
    var issues: [IssueKey: IssueDelta] = [:]
    var heights: [HeightKey: (reports: Int, windowSized: Int)] = [:]
    var idiomSessions: [ValueKey: Int] = [:]         // dimension "idiom"
    var testCrashes: [TestCrashKey: Int] = [:]
    var affected: [ValueKey: Int] = [:]              // newly affected sessions per dimension value
    var installs: [InstallKey: InstallDelta] = [:]
    var installKinds: [InstallKindKey: InstallKindDelta] = [:]
    /// Session starts per hour of their start, and sessions newly affected per hour of their
    /// first active report (the Over time share of sessions with a glitch).
    var hourlySessions: [ReleaseHourKey: HourSessions] = [:]
    /// Sessions newly affected by a kind per hour of that report (keys are also in `hourly`).
    var hourlyAffected: [HourKey: Int] = [:]
    var networkSessions: [ValueKey: Int] = [:]       // dimension "network"
    /// Each release's app policy, as its records carried it (for the admission after the write).
    var policies: [Int: IngestPolicy] = [:]

    /// The number of a release in this transaction.
    mutating func release(app: String, version: String, build: String) -> Int {
        if let last = lastRelease, last.key.app == app, last.key.version == version, last.key.build == build { return last.number }
        let key = ReleaseKey(app: app, version: version, build: build)
        let number: Int
        if let known = releaseNumbers[key] {
            number = known
        } else {
            number = releaseKeys.count
            releaseKeys.append(key)
            releases.append(ReleaseDelta())
            releaseNumbers[key] = number
        }
        lastRelease = (key, number)
        return number
    }

    /// Adds one new report. `newlyAffectedSession`: its session had no active report in this
    /// release before; `newIssueSession`: none of this fingerprint; `newlyAffectedValues`: the
    /// dimensions (`kind`, `screen`, …) whose value this session had no active report of before.
    mutating func add(_ report: ReportRecord, receivedAt: Int64, newlyAffectedSession: Bool, newIssueSession: Bool,
                      newlyAffectedValues: [(dimension: String, value: String)]) {
        let release = self.release(app: report.app, version: report.version, build: report.build)
        releases[release].seen(report.occurredAt)
        releases[release].lastReceived = max(releases[release].lastReceived, receivedAt)
        if report.hasUnknownSession { releases[release].unknownSessionReports += 1 }
        policies[release] = report.policy
        if newlyAffectedSession { releases[release].affectedSessions += 1 }
        if report.autoFixed { releases[release].autoFixed += 1 }
        if report.testCrash { releases[release].testCrashes += 1 }

        kinds[KindKey(release: release, kind: report.kind), default: Count()].add(report)
        breakdown[BreakdownKey(release: release, dimension: "screen", value: report.screen ?? "", kind: report.kind), default: Count()].add(report)
        breakdown[BreakdownKey(release: release, dimension: "keyboard_mode", value: report.keyboardMode ?? "", kind: report.kind), default: Count()].add(report)
        breakdown[BreakdownKey(release: release, dimension: "idiom", value: report.idiom ?? "", kind: report.kind), default: Count()].add(report)
        // What a restarted node reads its admitted channels back from (`CardinalitySQL`): one
        // row per channel, all kinds (empty `kind`), so a batch adds one upsert, not one per kind.
        breakdown[BreakdownKey(release: release, dimension: "channel", value: report.channel ?? "", kind: ""), default: Count()].add(report)
        let hourKey = HourKey(release: release, kind: report.kind, hour: Self.hour(report.occurredAt))
        hourly[hourKey, default: Count()].add(report)
        if newlyAffectedSession { hourlySessions[ReleaseHourKey(release: release, hour: hourKey.hour), default: HourSessions()].affected += 1 }
        for (dimension, value) in newlyAffectedValues {
            affected[ValueKey(release: release, dimension: dimension, value: value), default: 0] += 1
            if dimension == "kind" { hourlyAffected[hourKey, default: 0] += 1 }
        }
        if !report.isSuspect, let install = report.installID {
            let installKey = InstallKey(release: release, install: install)
            installs[installKey, default: InstallDelta()].reports += 1
            if newlyAffectedSession {
                installs[installKey, default: InstallDelta()].affectedSessions += 1
                if report.hasAttestedSession { installs[installKey, default: InstallDelta()].attestedAffectedSessions += 1 }
            }
            let kindKey = InstallKindKey(release: release, install: install, kind: report.kind)
            var kind = installKinds[kindKey] ?? InstallKindDelta()
            if !report.isFlooded { kind.reports += 1 }
            if newlyAffectedValues.contains(where: { $0.dimension == "kind" }) {
                kind.affected += 1
                if report.hasAttestedSession { kind.attestedAffected += 1 }
            }
            installKinds[kindKey] = kind
        }

        let issueKey = IssueKey(release: release, fingerprint: report.fingerprint)
        var issue = issues[issueKey]
            ?? IssueDelta(kind: report.kind, screen: report.screen, viewName: report.viewName, keyboardMode: report.keyboardMode)
        issue.count.add(report)
        if newIssueSession { issue.affectedSessions += 1 }
        issue.firstSeen = min(issue.firstSeen, report.occurredAt)
        issue.lastSeen = max(issue.lastSeen, report.occurredAt)
        issues[issueKey] = issue

        if !report.isSuspect, !report.isFlooded, let height = report.keyboardHeight, height.isFinite, height >= 0, height < 100_000 {
            let windowSized = (report.windowHeight ?? 0) > 0 && height >= 0.9 * (report.windowHeight ?? 0)
            let heightKey = HeightKey(release: release, model: report.deviceModel ?? "", mode: report.keyboardMode ?? "",
                                      inputMode: report.inputMode ?? "", height: Int(height.rounded()))
            var bucket = heights[heightKey] ?? (0, 0)
            bucket.reports += 1
            if windowSized { bucket.windowSized += 1 }
            heights[heightKey] = bucket
        }
    }

    /// Adds one new session start; one with `marks` is only counted as held apart: it is in no
    /// denominator, no install's sessions and no hour, and does not move the release's first day.
    mutating func add(_ session: SessionRecord, marks: SessionMarks, receivedAt: Int64) {
        let release = self.release(app: session.app, version: session.version, build: session.build)
        releases[release].lastReceived = max(releases[release].lastReceived, receivedAt)
        guard marks.isEmpty else {
            policies[release] = session.policy
            releases[release].implausibleSessions += 1
            // A start far from its arrival is not believed: the release was seen when it arrived.
            releases[release].seen(marks.contains(.farFromArrival) ? receivedAt : session.startedAt)
            return
        }
        policies[release] = session.policy
        if let network = session.network {
            networkSessions[ValueKey(release: release, dimension: "network", value: network), default: 0] += 1
        }
        releases[release].sessions += 1
        releases[release].seen(session.startedAt)
        idiomSessions[ValueKey(release: release, dimension: "idiom", value: session.idiom ?? ""), default: 0] += 1
        let hourKey = ReleaseHourKey(release: release, hour: Self.hour(session.startedAt))
        hourlySessions[hourKey, default: HourSessions()].sessions += 1
        if session.attested { hourlySessions[hourKey, default: HourSessions()].attested += 1 }
        if let install = session.installID {
            let installKey = InstallKey(release: release, install: install)
            var installDelta = installs[installKey] ?? InstallDelta()
            installDelta.sessions += 1
            if session.attested { installDelta.attestedSessions += 1 }
            installDelta.channel = session.channel ?? installDelta.channel
            installDelta.idiom = session.idiom ?? installDelta.idiom
            installDelta.network = installDelta.network ?? session.network
            installs[installKey] = installDelta
        }
    }

    /// Hours since the epoch, UTC, rounding down before 1970 too.
    static func hour(_ milliseconds: Int64) -> Int64 {
        milliseconds >= 0 ? milliseconds / 3_600_000 : (milliseconds - 3_599_999) / 3_600_000
    }

    func write(_ db: Database) throws {
        let release = try db.cachedStatement(sql: """
            INSERT INTO releases (app, version, build, sessions, affected_sessions, auto_fixed, test_crashes, first_seen, last_seen,
                                  implausible_sessions, unknown_session_reports, last_received)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (app, version, build) DO UPDATE SET
                sessions = sessions + excluded.sessions,
                implausible_sessions = implausible_sessions + excluded.implausible_sessions,
                unknown_session_reports = unknown_session_reports + excluded.unknown_session_reports,
                affected_sessions = affected_sessions + excluded.affected_sessions,
                auto_fixed = auto_fixed + excluded.auto_fixed,
                test_crashes = test_crashes + excluded.test_crashes,
                first_seen = min(first_seen, excluded.first_seen),
                last_seen = max(last_seen, excluded.last_seen),
                last_received = max(last_received, excluded.last_received)
            """)
        for (number, delta) in releases.enumerated() {
            try release.step(db) { bind in
                self.bind(number, &bind)
                bind.integer(delta.sessions)
                bind.integer(delta.affectedSessions)
                bind.integer(delta.autoFixed)
                bind.integer(delta.testCrashes)
                bind.integer(delta.firstSeen)
                bind.integer(delta.lastSeen)
                bind.integer(delta.implausibleSessions)
                bind.integer(delta.unknownSessionReports)
                bind.integer(delta.lastReceived)
            }
        }
        let counts = "reports = reports + excluded.reports, suspect_reports = suspect_reports + excluded.suspect_reports, flooded_reports = flooded_reports + excluded.flooded_reports"
        if !kinds.isEmpty {
            let statement = try db.cachedStatement(sql: """
                INSERT INTO release_kinds (app, version, build, kind, reports, suspect_reports, flooded_reports) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT DO UPDATE SET \(counts)
                """)
            for (key, count) in kinds {
                try statement.step(db) { bind in
                    self.bind(key.release, &bind)
                    bind.text(key.kind)
                    Self.bind(count, &bind)
                }
            }
        }
        if !breakdown.isEmpty {
            let statement = try db.cachedStatement(sql: """
                INSERT INTO release_breakdown (app, version, build, dimension, value, kind, reports, suspect_reports, flooded_reports)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT DO UPDATE SET \(counts)
                """)
            for (key, count) in breakdown {
                try statement.step(db) { bind in
                    self.bind(key.release, &bind)
                    bind.text(key.dimension)
                    bind.text(key.value)
                    bind.text(key.kind)
                    Self.bind(count, &bind)
                }
            }
        }
        if !hourly.isEmpty {
            let statement = try db.cachedStatement(sql: """
                INSERT INTO release_hourly (app, version, build, kind, hour, reports, suspect_reports, flooded_reports, affected_sessions) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT DO UPDATE SET \(counts), affected_sessions = affected_sessions + excluded.affected_sessions
                """)
            for (key, count) in hourly {
                try statement.step(db) { bind in
                    self.bind(key.release, &bind)
                    bind.text(key.kind)
                    bind.integer(key.hour)
                    Self.bind(count, &bind)
                    bind.integer(hourlyAffected[key] ?? 0)
                }
            }
        }
        try writeIssues(db)
        try writeCohorts(db)
    }

    private func writeIssues(_ db: Database) throws {
        if !issues.isEmpty {
            let statement = try db.cachedStatement(sql: """
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
                try statement.step(db) { bind in
                    self.bind(key.release, &bind)
                    bind.text(key.fingerprint)
                    bind.text(delta.kind)
                    bind.text(delta.screen)
                    bind.text(delta.viewName)
                    bind.text(delta.keyboardMode)
                    Self.bind(delta.count, &bind)
                    bind.integer(delta.affectedSessions)
                    bind.integer(delta.firstSeen)
                    bind.integer(delta.lastSeen)
                }
            }
        }
        if !heights.isEmpty {
            let statement = try db.cachedStatement(sql: """
                INSERT INTO keyboard_heights (app, version, build, model, mode, input_mode, height, reports, window_sized) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT DO UPDATE SET reports = reports + excluded.reports, window_sized = window_sized + excluded.window_sized
                """)
            for (key, bucket) in heights {
                try statement.step(db) { bind in
                    self.bind(key.release, &bind)
                    bind.text(key.model)
                    bind.text(key.mode)
                    bind.text(key.inputMode)
                    bind.integer(key.height)
                    bind.integer(bucket.reports)
                    bind.integer(bucket.windowSized)
                }
            }
        }
        if !testCrashes.isEmpty {
            let statement = try db.cachedStatement(sql: """
                INSERT INTO test_crash_daily (app, install_id, day, crashes) VALUES (?, ?, ?, ?)
                ON CONFLICT DO UPDATE SET crashes = crashes + excluded.crashes
                """)
            for (key, count) in testCrashes {
                try statement.step(db) { bind in
                    bind.text(key.app)
                    bind.text(key.install)
                    bind.integer(key.day)
                    bind.integer(count)
                }
            }
        }
    }

    /// Session starts per idiom and hour, affected sessions per dimension value, per install.
    private func writeCohorts(_ db: Database) throws {
        if !idiomSessions.isEmpty {
            let statement = try db.cachedStatement(sql: """
                INSERT INTO release_idiom_sessions (app, version, build, idiom, sessions) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT DO UPDATE SET sessions = sessions + excluded.sessions
                """)
            for (key, sessions) in idiomSessions {
                try statement.step(db) { bind in
                    self.bind(key.release, &bind)
                    bind.text(key.value)
                    bind.integer(sessions)
                }
            }
        }
        if !affected.isEmpty {
            let statement = try db.cachedStatement(sql: """
                INSERT INTO release_affected (app, version, build, dimension, value, affected_sessions) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT DO UPDATE SET affected_sessions = affected_sessions + excluded.affected_sessions
                """)
            for (key, count) in affected {
                try statement.step(db) { bind in
                    self.bind(key.release, &bind)
                    bind.text(key.dimension)
                    bind.text(key.value)
                    bind.integer(count)
                }
            }
        }
        if !installs.isEmpty {
            let statement = try db.cachedStatement(sql: """
                INSERT INTO release_installs (app, version, build, install_id, channel, idiom, sessions, reports, affected_sessions, network,
                                              attested_sessions, attested_affected_sessions)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT DO UPDATE SET
                    channel = coalesce(excluded.channel, channel),
                    idiom = coalesce(excluded.idiom, idiom),
                    network = coalesce(network, excluded.network),
                    attested_sessions = attested_sessions + excluded.attested_sessions,
                    attested_affected_sessions = attested_affected_sessions + excluded.attested_affected_sessions,
                    sessions = sessions + excluded.sessions,
                    reports = reports + excluded.reports,
                    affected_sessions = affected_sessions + excluded.affected_sessions
                """)
            for (key, delta) in installs {
                try statement.step(db) { bind in
                    self.bind(key.release, &bind)
                    bind.text(key.install)
                    bind.text(delta.channel)
                    bind.text(delta.idiom)
                    bind.integer(delta.sessions)
                    bind.integer(delta.reports)
                    bind.integer(delta.affectedSessions)
                    bind.text(delta.network)
                    bind.integer(delta.attestedSessions)
                    bind.integer(delta.attestedAffectedSessions)
                }
            }
        }
        if !installKinds.isEmpty {
            let statement = try db.cachedStatement(sql: """
                INSERT INTO release_install_kinds (app, version, build, install_id, kind, reports, affected_sessions, attested_affected_sessions)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT DO UPDATE SET reports = reports + excluded.reports, affected_sessions = affected_sessions + excluded.affected_sessions,
                    attested_affected_sessions = attested_affected_sessions + excluded.attested_affected_sessions
                """)
            for (key, count) in installKinds {
                try statement.step(db) { bind in
                    self.bind(key.release, &bind)
                    bind.text(key.install)
                    bind.text(key.kind)
                    bind.integer(count.reports)
                    bind.integer(count.affected)
                    bind.integer(count.attestedAffected)
                }
            }
        }
        if !networkSessions.isEmpty {
            let statement = try db.cachedStatement(sql: """
                INSERT INTO release_networks (app, version, build, network, sessions) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT DO UPDATE SET sessions = sessions + excluded.sessions
                """)
            for (key, count) in networkSessions {
                try statement.step(db) { bind in
                    self.bind(key.release, &bind)
                    bind.text(key.value)
                    bind.integer(count)
                }
            }
        }
        if !hourlySessions.isEmpty {
            let statement = try db.cachedStatement(sql: """
                INSERT INTO release_hourly_sessions (app, version, build, hour, sessions, affected_sessions, attested_sessions) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT DO UPDATE SET sessions = sessions + excluded.sessions, affected_sessions = affected_sessions + excluded.affected_sessions,
                    attested_sessions = attested_sessions + excluded.attested_sessions
                """)
            for (key, count) in hourlySessions {
                try statement.step(db) { bind in
                    self.bind(key.release, &bind)
                    bind.integer(key.hour)
                    bind.integer(count.sessions)
                    bind.integer(count.affected)
                    bind.integer(count.attested)
                }
            }
        }
    }

    /// Binds app, version and build of the release numbered `number`.
    private func bind(_ number: Int, _ bind: inout StatementBinder) {
        let key = releaseKeys[number]
        bind.text(key.app)
        bind.text(key.version)
        bind.text(key.build)
    }

    private static func bind(_ count: Count, _ bind: inout StatementBinder) {
        bind.integer(count.reports)
        bind.integer(count.suspect)
        bind.integer(count.flooded)
    }

    /// The releases of this transaction that may be listed without a declaration, with their
    /// policy (`strict` ones never are).
    var admissionCandidates: [(key: ReleaseKey, policy: AdmissionPolicy)] {
        policies.compactMap { number, policy in
            policy.admission.mode == .strict ? nil : (releaseKeys[number], policy.admission)
        }.sorted { ($0.key.app, $0.key.version, $0.key.build) < ($1.key.app, $1.key.version, $1.key.build) }
    }
}
