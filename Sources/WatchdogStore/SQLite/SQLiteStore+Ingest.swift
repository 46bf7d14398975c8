import GRDB

extension SQLiteStore {
    public func ingest(_ batches: [IngestBatch]) throws -> [IngestOutcome] {
        let known = markRefs.withLock { $0 }
        var added = MarkRefs.Numbers()
        let outcomes = try pool.writeWithoutTransaction { db in
            var outcomes: [IngestOutcome] = []
            try db.inTransaction(.immediate) {
                outcomes = []
                added = MarkRefs.Numbers()
                var refs = MarkRefs(known: known)
                var rollup = Rollup()
                for batch in batches {
                    // The counter first, in request order: a batch that does not move it on stores nothing.
                    if let assertion = batch.assertion, try !advance(assertion, db) {
                        outcomes.append(.counterNotIncreasing)
                        continue
                    }
                    switch batch.items {
                    case .reports(let reports, let drops):
                        outcomes.append(.stored(try insert(reports, receivedAt: batch.receivedAt, refs: &refs, into: &rollup, db)))
                        if let drops { try insert(drops, receivedAt: batch.receivedAt, db) }
                    case .sessions(let sessions):
                        outcomes.append(.stored(try insert(sessions, receivedAt: batch.receivedAt, into: &rollup, db)))
                    }
                }
                try rollup.write(db)
                try Self.admit(rollup.admissionCandidates, now: batches.map(\.receivedAt).max() ?? 0, db)
                added = refs.added
                return .commit
            }
            return outcomes
        }
        // Only numbers of a committed transaction are remembered: a rolled-back one's number
        // could be handed to another release or value by the next transaction.
        if !added.isEmpty { markRefs.withLock { $0.merge(added, valueLimit: Self.valueNumbersInMemory, releaseLimit: Self.releaseNumbersInMemory) } }
        try journalProbe.check()
        return outcomes
    }

    private func insert(_ reports: [ReportRecord], receivedAt: Int64, refs: inout MarkRefs, into rollup: inout Rollup, _ db: Database) throws -> IngestCounts {
        // Texts as numbers (`2026-11-26-numbered-reports`): the release, and the app, kind,
        // screen and channel through `mark_values`.
        let statement = try db.cachedStatement(sql: """
            INSERT INTO reports (id, app, release, kind, fingerprint, screen, channel, occurred_at, received_at, suspect, unknown_session, body)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (app, id) DO NOTHING
            """)
        // A counted start and its install; no row for a session never started in this app.
        let sessionMarks = try db.cachedStatement(sql: "SELECT implausible, install_id, attested FROM sessions WHERE id = ? AND app = ?")
        let affected = try db.cachedStatement(sql: "INSERT INTO session_affected_marks (release, session) VALUES (?, ?) ON CONFLICT DO NOTHING")
        let issueSession = try db.cachedStatement(sql: """
            INSERT INTO session_issue_marks (release, fingerprint, session, reports) VALUES (?, ?, ?, 1)
            ON CONFLICT DO UPDATE SET reports = reports + 1 WHERE reports <= ?
            RETURNING reports
            """)
        let affectedValue = try db.cachedStatement(sql: """
            INSERT INTO session_value_marks (release, dimension, value, session) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING
            """)
        let markFlooded = try db.cachedStatement(sql: "UPDATE reports SET flooded = 1 WHERE rowid = ?")
        var counts = IngestCounts(accepted: 0, duplicates: 0)
        var testCrashes: [[String]: Int] = [:]
        for var report in reports {
            let numbers: MarkRefs.ReportNumbers
            if let known = refs.knownNumbers(of: report) {
                numbers = known
            } else {
                // A re-sent id is a duplicate whatever its texts: one with a version, kind, screen
                // or channel never stored must not add a release_refs or mark_values row for ever.
                // Only a report needing a number it does not have is looked for (GRDB keeps the
                // statement prepared).
                let probe = try db.cachedStatement(sql: """
                    SELECT 1 FROM reports WHERE app = (SELECT number FROM mark_values WHERE value = ?) AND id = ?
                    """)
                let stored = try probe.step(db) { bind in
                    bind.text(report.app)
                    bind.compactID(report.id)
                }
                guard stored == nil else {
                    counts.duplicates += 1
                    continue
                }
                numbers = try refs.numbers(of: report, db)
            }
            // The session is looked up first, so the row is written once, as it ends up (an
            // update after the insert rewrote every report of an unknown session).
            if !report.isSuspect, let sessionID = report.sessionID {
                var counted = false, install: String?, attested = false
                try sessionMarks.forEachRow(db, bind: { bind in
                    bind.compactID(sessionID)
                    bind.text(report.app)
                }) { row in
                    counted = row.integer(0) == 0
                    install = row.optionalText(1)
                    attested = row.integer(2) != 0
                }
                report.hasUnknownSession = !counted
                report.hasAttestedSession = counted && attested
                // Its roll-ups go to the install that started the session, whatever install
                // the report names: a report cannot move a session into another install (or
                // network) than the one it was counted in.
                if counted { report.installID = install }
            }
            let release = numbers.release
            let fingerprint = CompactFingerprint.integer(report.fingerprint)
            try statement.step(db) { bind in
                bind.compactID(report.id)
                bind.integer(numbers.app)
                bind.integer(release)
                bind.integer(numbers.kind)
                if let fingerprint { bind.integer(fingerprint) } else { bind.text(report.fingerprint) }
                bind.integer(numbers.screen)
                bind.integer(numbers.channel)
                bind.integer(report.occurredAt)
                bind.integer(receivedAt)
                bind.bool(report.isSuspect)
                bind.bool(report.hasUnknownSession)
                bind.blob(report.storedBody)
            }
            guard db.changesCount == 1 else {
                counts.duplicates += 1
                continue
            }
            let rowID = db.lastInsertedRowID
            counts.accepted += 1
            var newlyAffected = false
            var newIssueSession = false
            var newlyAffectedValues: [(dimension: String, value: String)] = []
            if !report.isSuspect, !report.hasUnknownSession, let sessionID = report.sessionID {
                // Counting stops past the cap (no row is rewritten for ever): no row back means flooded.
                let cap = Int64(floodCap > 0 ? floodCap : Int.max - 1)
                let reportsOfFingerprint = try issueSession.step(db) { bind in
                    bind.integer(release)
                    if let fingerprint { bind.integer(fingerprint) } else { bind.text(report.fingerprint) }
                    bind.compactID(sessionID)
                    bind.integer(cap)
                } ?? cap + 1
                newIssueSession = reportsOfFingerprint == 1
                if reportsOfFingerprint > cap {
                    report.isFlooded = true
                    try markFlooded.step(db) { $0.integer(rowID) }
                }
                // A session seen with this fingerprint before is affected already.
                if newIssueSession {
                    try affected.step(db) { bind in
                        bind.integer(release)
                        bind.compactID(sessionID)
                    }
                    newlyAffected = db.changesCount == 1
                }
                // A session runs on one device: newly affected, it is newly affected for its idiom.
                if newlyAffected { newlyAffectedValues.append(("idiom", report.idiom ?? "")) }
                // A session seen with this fingerprint already has its kind, screen and
                // keyboard mode counted: the fingerprint is made of them.
                if newIssueSession {
                    for (code, (dimension, value)) in [("kind", report.kind), ("screen", report.screen ?? ""), ("keyboard_mode", report.keyboardMode ?? "")].enumerated() {
                        let number = try refs.number(of: value, db)
                        try affectedValue.step(db) { bind in
                            bind.integer(release)
                            bind.integer(code)
                            bind.integer(number)
                            bind.compactID(sessionID)
                        }
                        if db.changesCount == 1 { newlyAffectedValues.append((dimension, value)) }
                    }
                }
            }
            rollup.add(report, receivedAt: receivedAt, newlyAffectedSession: newlyAffected, newIssueSession: newIssueSession, newlyAffectedValues: newlyAffectedValues)
            if report.testCrash, let install = report.installID {
                rollup.testCrashes[Rollup.TestCrashKey(app: report.app, install: install, day: receivedAt / 86_400_000), default: 0] += 1
                testCrashes[[report.app, install], default: 0] += 1
            }
        }
        counts.testCrashes = testCrashes.map { TestCrashCount(app: $0.key[0], installID: $0.key[1], crashes: $0.value) }
        return counts
    }

    private func insert(_ sessions: [SessionRecord], receivedAt: Int64, into rollup: inout Rollup, _ db: Database) throws -> IngestCounts {
        let statement = try db.cachedStatement(sql: """
            INSERT INTO sessions (id, app, version, build, channel, install_id, idiom, started_at, received_at, body, network, attested)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO NOTHING
            """)
        let setMarks = try db.cachedStatement(sql: "UPDATE sessions SET implausible = ? WHERE rowid = ?")
        let limiter = SQLiteSessionLimiter()
        var counts = IngestCounts(accepted: 0, duplicates: 0)
        for session in sessions {
            try statement.step(db) { bind in
                bind.compactID(session.id)
                bind.text(session.app)
                bind.text(session.version)
                bind.text(session.build)
                bind.text(session.channel)
                bind.text(session.installID)
                bind.text(session.idiom)
                bind.integer(session.startedAt)
                bind.integer(receivedAt)
                bind.blob(session.storedBody)
                bind.text(session.network)
                bind.bool(session.attested)
            }
            if db.changesCount == 1 {
                let rowID = db.lastInsertedRowID
                counts.accepted += 1
                let marks = try limiter.marks(of: session, receivedAt: receivedAt, db)
                if !marks.isEmpty { try setMarks.step(db) { bind in
                    bind.integer(marks.rawValue)
                    bind.integer(rowID)
                } }
                rollup.add(session, marks: marks, receivedAt: receivedAt)
            } else {
                counts.duplicates += 1
            }
        }
        return counts
    }

    /// One row per `client_dropped`; a repeated id (a re-sent batch) is not counted again.
    private func insert(_ drops: ClientDropRecord, receivedAt: Int64, _ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO client_drops (id, app, version, build, evicted, quarantined, received_at) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO NOTHING
            """, arguments: [drops.id, drops.app, drops.version, drops.build, drops.evicted, drops.quarantined, receivedAt])
    }

    /// Lists the releases of a transaction that its apps' policies admit: `open` on sight,
    /// `auto` once their counted starts come from enough installs and networks, while the app's
    /// automatic admissions of the last 24 hours are under its daily budget — or, the budget
    /// full, in place of the one of them with the fewest networks when the candidate has more
    /// (that one goes back to unlisted, its data kept): the budget goes to reach, not to
    /// whoever posts first (`unlistedEvidence`: a listed release costs one primary-key probe).
    static func admit(_ candidates: [(key: Rollup.ReleaseKey, policy: AdmissionPolicy)], now: Int64, _ db: Database) throws {
        guard !candidates.isEmpty else { return }
        let insert = try db.cachedStatement(sql: """
            INSERT INTO release_admissions (app, version, build, state, admitted_by, admitted_at, reason) VALUES (?, ?, ?, 'admitted', ?, ?, ?)
            ON CONFLICT DO NOTHING
            """)
        for (key, policy) in candidates {
            guard let evidence = try unlistedEvidence(key, db) else { continue }
            var reason = "listed on sight (admission open)"
            if policy.mode == .auto {
                guard policy.isMet(by: evidence) else { continue }
                let today = try Int.fetchOne(db, sql: "SELECT count(*) FROM release_admissions WHERE app = ? AND admitted_by = 'auto' AND admitted_at > ?",
                                             arguments: [key.app, now - 86_400_000]) ?? 0
                reason = AdmissionPolicy.reason(evidence)
                if today >= policy.releasesPerDay {
                    guard let weakest = try Row.fetchOne(db, sql: """
                        SELECT a.version, a.build, (SELECT count(*) FROM release_networks n
                                                    WHERE n.app = a.app AND n.version = a.version AND n.build = a.build AND n.sessions > 0) AS networks
                        FROM release_admissions a WHERE a.app = ? AND a.admitted_by = 'auto' AND a.admitted_at > ?
                        ORDER BY networks, a.admitted_at DESC LIMIT 1
                        """, arguments: [key.app, now - 86_400_000]), (weakest[2] as Int) < evidence.networks else { continue }
                    try db.execute(sql: "DELETE FROM release_admissions WHERE app = ? AND version = ? AND build = ?", arguments: [key.app, weakest[0], weakest[1]])
                    reason += AdmissionPolicy.displacing(ReleaseID(version: weakest[0], build: weakest[1]), networks: weakest[2])
                }
            }
            try insert.step(db) { bind in
                bind.text(key.app)
                bind.text(key.version)
                bind.text(key.build)
                bind.text(policy.mode.rawValue)
                bind.integer(now)
                bind.text(reason)
            }
        }
    }
}
