import PostgresClient

extension PostgresStore {
    /// One transaction for every batch, set-based: a handful of statements over `unnest(...)`
    /// arrays whatever the number of reports, each touching its rows in key order.
    public func ingest(_ batches: [IngestBatch]) throws -> [IngestOutcome] {
        let days = batches.map { Self.day($0.receivedAt) }
        if let first = days.min(), let last = days.max() { try ensurePartitions(days: first...last) }
        return try pool.transaction { connection in
            // The counters first: a batch that does not move its key's on stores nothing.
            let refused = try advanceCounters(of: batches, connection)
            var rollup = Rollup()
            var counts = [IngestCounts](repeating: IngestCounts(accepted: 0, duplicates: 0), count: batches.count)
            var reports: [(record: ReportRecord, receivedAt: Int64, batch: Int)] = []
            var drops: [(ClientDropRecord, Int64)] = []
            var sessions: [(record: SessionRecord, receivedAt: Int64, batch: Int)] = []
            for (index, batch) in batches.enumerated() where !refused.contains(index) {
                switch batch.items {
                case .reports(let items, let drop):
                    reports += items.map { ($0, batch.receivedAt, index) }
                    if let drop { drops.append((drop, batch.receivedAt)) }
                case .sessions(let items):
                    sessions += items.map { ($0, batch.receivedAt, index) }
                }
            }
            try insertSessions(sessions, counts: &counts, rollup: &rollup, connection)
            try insertReports(reports, counts: &counts, rollup: &rollup, connection)
            try insertDrops(drops, connection)
            // The shared roll-up rows are written last, in one statement sent with its COMMIT
            // (`Rollup.write`): no round trip to this node while they are locked. Admission
            // reads them, for a release not listed yet; under `auto` without session starts in
            // this batch its evidence (sessions, installs and networks with sessions) is the
            // same before the write as after, so it is decided before. Only an `open` release's
            // first batch and an unlisted `auto` release's session starts are admitted after
            // the write, and commit after it.
            let now = batches.map(\.receivedAt).max() ?? 0
            let candidates = try Self.unadmitted(rollup.admissionCandidates, connection)
            let withSessions = Set(zip(rollup.releaseKeys, rollup.releases).filter { $0.1.sessions > 0 }.map(\.0))
            let decidedBefore = { (candidate: (key: Rollup.ReleaseKey, policy: AdmissionPolicy)) in
                candidate.policy.mode == .auto && !withSessions.contains(candidate.key)
            }
            try Self.admit(candidates.filter(decidedBefore), now: now, connection)
            let after = candidates.filter { !decidedBefore($0) }
            try rollup.write(connection, committing: after.isEmpty)
            try Self.admit(after, now: now, connection)
            return counts.indices.map { refused.contains($0) ? .counterNotIncreasing : .stored(counts[$0]) }
        }
    }

    private func insertSessions(_ sessions: [(record: SessionRecord, receivedAt: Int64, batch: Int)], counts: inout [IngestCounts],
                                rollup: inout Rollup, _ connection: PostgresConnection) throws {
        guard !sessions.isEmpty else { return }
        // Key order for the inserts; the first of a repeated id in request order is the one stored.
        var firstIndex: [String: Int] = [:]
        for (index, session) in sessions.enumerated() where firstIndex[session.record.id] == nil { firstIndex[session.record.id] = index }
        let order = firstIndex.sorted { $0.key < $1.key }.map(\.value)
        let rows = order.map { sessions[$0] }
        let inserted = try connection.query("""
            INSERT INTO sessions (id, app, version, build, channel, install_id, idiom, started_at, received_at, body, network, attested)
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::bigint[], $10::bytea[],
                                 $11::text[], $12::boolean[])
            ON CONFLICT (id) DO NOTHING RETURNING id
            """, [
                PostgresArray.text(rows.map(\.record.id)), PostgresArray.text(rows.map(\.record.app)),
                PostgresArray.text(rows.map(\.record.version)), PostgresArray.text(rows.map(\.record.build)),
                PostgresArray.text(rows.map(\.record.channel)), PostgresArray.text(rows.map(\.record.installID)),
                PostgresArray.text(rows.map(\.record.idiom)), PostgresArray.integer(rows.map(\.record.startedAt)),
                PostgresArray.integer(rows.map(\.receivedAt)), PostgresArray.bytes(rows.map(\.record.storedBody)),
                PostgresArray.text(rows.map(\.record.network)), PostgresArray.bool(rows.map(\.record.attested)),
            ])
        let new = Set(inserted.map { $0.text(0) })
        var accepted: [Int] = []
        for (index, session) in sessions.enumerated() {
            if new.contains(session.record.id), firstIndex[session.record.id] == index {
                counts[session.batch].accepted += 1
                accepted.append(index)
            } else {
                counts[session.batch].duplicates += 1
            }
        }
        let marks = try PostgresSessionLimiter().marks(of: accepted.map { .init(session: sessions[$0].record, receivedAt: sessions[$0].receivedAt) }, connection)
        for (index, marks) in zip(accepted, marks) {
            rollup.add(sessions[index].record, marks: marks, receivedAt: sessions[index].receivedAt)
        }
    }

    private struct MarkKey: Hashable, Comparable {
        var app: String, version: String, build: String, fingerprint: String, session: String
        static func < (a: Self, b: Self) -> Bool {
            (a.app, a.version, a.build, a.fingerprint, a.session) < (b.app, b.version, b.build, b.fingerprint, b.session)
        }
    }

    private struct SessionKey: Hashable, Comparable {
        var app: String, version: String, build: String, session: String
        static func < (a: Self, b: Self) -> Bool { (a.app, a.version, a.build, a.session) < (b.app, b.version, b.build, b.session) }
    }

    private struct ValueMarkKey: Hashable, Comparable {
        var app: String, version: String, build: String, dimension: String, value: String, session: String
        static func < (a: Self, b: Self) -> Bool {
            (a.app, a.version, a.build, a.dimension, a.value, a.session) < (b.app, b.version, b.build, b.dimension, b.value, b.session)
        }
    }

    private func insertReports(_ reports: [(record: ReportRecord, receivedAt: Int64, batch: Int)], counts: inout [IngestCounts],
                               rollup: inout Rollup, _ connection: PostgresConnection) throws {
        guard !reports.isEmpty else { return }
        // 1. The exactly-once guard: which (app, id) are new, across every node.
        struct ReportKey: Hashable { var app: String; var id: String }
        var firstIndex: [ReportKey: Int] = [:]
        for (index, report) in reports.enumerated() {
            let key = ReportKey(app: report.record.app, id: report.record.id)
            if firstIndex[key] == nil { firstIndex[key] = index }
        }
        let keyOrder = firstIndex.keys.sorted { ($0.app, $0.id) < ($1.app, $1.id) }
        let claimed = try connection.query("""
            INSERT INTO report_keys (app, id, received_at) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
            ON CONFLICT DO NOTHING RETURNING app, id
            """, [PostgresArray.text(keyOrder.map(\.app)), PostgresArray.text(keyOrder.map(\.id)),
                  PostgresArray.integer(keyOrder.map { reports[firstIndex[$0]!].receivedAt })])
        let newKeys = Set(claimed.map { ReportKey(app: $0.text(0), id: $0.text(1)) })
        var new: [Int] = []
        for (index, report) in reports.enumerated() {
            let key = ReportKey(app: report.record.app, id: report.record.id)
            if newKeys.contains(key), firstIndex[key] == index {
                counts[report.batch].accepted += 1
                new.append(index)
            } else {
                counts[report.batch].duplicates += 1
            }
        }
        guard !new.isEmpty else { return }

        // 2. Reports whose session has no counted start make no session affected.
        var records: [Int: ReportRecord] = [:]
        for index in new { records[index] = reports[index].record }
        let asked = Set(new.compactMap { records[$0]!.isSuspect ? nil : records[$0]!.sessionID }).sorted()
        if !asked.isEmpty {
            var counted: [[String]: (install: String?, attested: Bool)] = [:]
            for row in try connection.query("SELECT id, app, install_id, attested FROM sessions WHERE id = ANY($1::text[]) AND implausible = 0",
                                            [PostgresArray.text(asked)]) {
                counted[[row.text(1), row.text(0)]] = (row.optionalText(2), row.bool(3))
            }
            for index in new {
                guard let record = records[index], !record.isSuspect, let session = record.sessionID else { continue }
                let start = counted[[record.app, session]]
                let install = start.map(\.install)
                records[index]!.hasUnknownSession = start == nil
                records[index]!.hasAttestedSession = start?.attested ?? false
                // Its roll-ups go to the install that started the session, whatever install
                // the report names (as on SQLite).
                if let install { records[index]!.installID = install }
            }
        }

        // 3. Per-session marks of the new active reports with a session: how many reports of
        // its fingerprint the session had before this transaction decides which are flooded
        // and which sessions are newly affected.
        var perMark: [MarkKey: [Int]] = [:]
        for index in new {
            let report = records[index]!
            guard !report.isSuspect, !report.hasUnknownSession, let session = report.sessionID else { continue }
            perMark[MarkKey(app: report.app, version: report.version, build: report.build, fingerprint: report.fingerprint, session: session), default: []].append(index)
        }
        var before: [Int: Int64] = [:]     // report index → reports of its mark before it
        let cap = Int64(floodCap > 0 ? floodCap : Int.max - 1)
        if !perMark.isEmpty {
            let marks = perMark.keys.sorted()
            // Counting stops past the cap (no row is rewritten for ever): no row back means flooded.
            let totals = try connection.query("""
                INSERT INTO session_issue_marks AS m (app, version, build, fingerprint, session, reports)
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[])
                ON CONFLICT (app, version, build, fingerprint, session) DO UPDATE SET reports = m.reports + excluded.reports WHERE m.reports <= $7
                RETURNING app, version, build, fingerprint, session, reports
                """, [PostgresArray.text(marks.map(\.app)), PostgresArray.text(marks.map(\.version)), PostgresArray.text(marks.map(\.build)),
                      PostgresArray.text(marks.map(\.fingerprint)), PostgresArray.text(marks.map(\.session)),
                      PostgresArray.integer(marks.map { Int64(perMark[$0]!.count) }), cap])
            var total: [MarkKey: Int64] = [:]
            for row in totals { total[MarkKey(app: row.text(0), version: row.text(1), build: row.text(2), fingerprint: row.text(3), session: row.text(4))] = row.integer(5) }
            for (mark, indices) in perMark {
                // Not returned: the mark was already past the cap.
                let prior = total[mark].map { $0 - Int64(indices.count) } ?? cap + 1
                for (offset, index) in indices.enumerated() { before[index] = prior + Int64(offset) }
            }
        }
        var newIssueSession: Set<Int> = []
        for index in new {
            var record = records[index]!
            if let prior = before[index] {
                if prior == 0 { newIssueSession.insert(index) }
                if prior + 1 > cap { record.isFlooded = true }
            }
            records[index] = record
        }

        // 4. Sessions newly affected (in this release), and per dimension value.
        var affectedFirst: [SessionKey: Int] = [:]
        var valueFirst: [ValueMarkKey: Int] = [:]
        for index in new where newIssueSession.contains(index) {
            let report = records[index]!
            let session = report.sessionID!
            let key = SessionKey(app: report.app, version: report.version, build: report.build, session: session)
            if affectedFirst[key] == nil { affectedFirst[key] = index }
            for (dimension, value) in [("kind", report.kind), ("screen", report.screen ?? ""), ("keyboard_mode", report.keyboardMode ?? "")] {
                let valueKey = ValueMarkKey(app: report.app, version: report.version, build: report.build, dimension: dimension, value: value, session: session)
                if valueFirst[valueKey] == nil { valueFirst[valueKey] = index }
            }
        }
        var newlyAffected: Set<Int> = []
        if !affectedFirst.isEmpty {
            let keys = affectedFirst.keys.sorted()
            for row in try connection.query("""
                INSERT INTO session_affected_marks (app, version, build, session) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
                ON CONFLICT DO NOTHING RETURNING app, version, build, session
                """, [PostgresArray.text(keys.map(\.app)), PostgresArray.text(keys.map(\.version)), PostgresArray.text(keys.map(\.build)), PostgresArray.text(keys.map(\.session))]) {
                if let index = affectedFirst[SessionKey(app: row.text(0), version: row.text(1), build: row.text(2), session: row.text(3))] { newlyAffected.insert(index) }
            }
        }
        var newlyAffectedValues: [Int: [(dimension: String, value: String)]] = [:]
        for index in newlyAffected { newlyAffectedValues[index, default: []].append(("idiom", records[index]!.idiom ?? "")) }
        if !valueFirst.isEmpty {
            let keys = valueFirst.keys.sorted()
            for row in try connection.query("""
                INSERT INTO session_value_marks (app, version, build, dimension, value, session)
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
                ON CONFLICT DO NOTHING RETURNING app, version, build, dimension, value, session
                """, [PostgresArray.text(keys.map(\.app)), PostgresArray.text(keys.map(\.version)), PostgresArray.text(keys.map(\.build)),
                      PostgresArray.text(keys.map(\.dimension)), PostgresArray.text(keys.map(\.value)), PostgresArray.text(keys.map(\.session))]) {
                let key = ValueMarkKey(app: row.text(0), version: row.text(1), build: row.text(2), dimension: row.text(3), value: row.text(4), session: row.text(5))
                if let index = valueFirst[key] { newlyAffectedValues[index, default: []].append((key.dimension, key.value)) }
            }
        }

        // 5. The rows themselves, and their counts in request order.
        let rows = new.map { (record: records[$0]!, receivedAt: reports[$0].receivedAt) }
        try connection.query("""
            INSERT INTO reports (id, app, version, build, channel, kind, occurred_at, received_at, suspect, screen, fingerprint, body, flooded, unknown_session)
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::bigint[],
                                 $9::boolean[], $10::text[], $11::text[], $12::bytea[], $13::boolean[], $14::boolean[])
            """, [
                PostgresArray.text(rows.map(\.record.id)), PostgresArray.text(rows.map(\.record.app)),
                PostgresArray.text(rows.map(\.record.version)), PostgresArray.text(rows.map(\.record.build)),
                PostgresArray.text(rows.map(\.record.channel)), PostgresArray.text(rows.map(\.record.kind)),
                PostgresArray.integer(rows.map(\.record.occurredAt)), PostgresArray.integer(rows.map(\.receivedAt)),
                PostgresArray.bool(rows.map(\.record.isSuspect)), PostgresArray.text(rows.map(\.record.screen)),
                PostgresArray.text(rows.map(\.record.fingerprint)), PostgresArray.bytes(rows.map(\.record.storedBody)),
                PostgresArray.bool(rows.map(\.record.isFlooded)), PostgresArray.bool(rows.map(\.record.hasUnknownSession)),
            ])
        var testCrashes: [Int: [[String]: Int]] = [:]
        for index in new {
            let record = records[index]!
            rollup.add(record, receivedAt: reports[index].receivedAt, newlyAffectedSession: newlyAffected.contains(index), newIssueSession: newIssueSession.contains(index),
                       newlyAffectedValues: newlyAffectedValues[index] ?? [])
            if record.testCrash, let install = record.installID {
                let receivedAt = reports[index].receivedAt
                rollup.testCrashes[Rollup.TestCrashKey(app: record.app, install: install, day: Self.day(receivedAt)), default: 0] += 1
                testCrashes[reports[index].batch, default: [:]][[record.app, install], default: 0] += 1
            }
        }
        for (batch, crashes) in testCrashes {
            counts[batch].testCrashes = crashes.map { TestCrashCount(app: $0.key[0], installID: $0.key[1], crashes: $0.value) }
        }
    }

    /// The candidates without a row in `release_admissions` (the only ones `admit` may list).
    static func unadmitted(_ candidates: [(key: Rollup.ReleaseKey, policy: AdmissionPolicy)],
                           _ connection: PostgresConnection) throws -> [(key: Rollup.ReleaseKey, policy: AdmissionPolicy)] {
        guard !candidates.isEmpty else { return [] }
        let rows = try connection.query("""
            SELECT a.app, a.version, a.build FROM release_admissions a
            JOIN unnest($1::text[], $2::text[], $3::text[]) AS k(app, version, build) ON a.app = k.app AND a.version = k.version AND a.build = k.build
            """, [PostgresArray.text(candidates.map(\.key.app)), PostgresArray.text(candidates.map(\.key.version)), PostgresArray.text(candidates.map(\.key.build))])
        let listed = Set(rows.map { [$0.text(0), $0.text(1), $0.text(2)] })
        return candidates.filter { !listed.contains([$0.key.app, $0.key.version, $0.key.build]) }
    }

    /// As `SQLiteStore.admit`: lists the releases of a transaction that its apps' policies admit.
    static func admit(_ candidates: [(key: Rollup.ReleaseKey, policy: AdmissionPolicy)], now: Int64, _ connection: PostgresConnection) throws {
        for (key, policy) in candidates {
            let release = ReleaseID(version: key.version, build: key.build)
            guard let evidence = try unlistedEvidence(app: key.app, [release], connection)[release] else { continue }
            var reason = "listed on sight (admission open)"
            if policy.mode == .auto {
                guard policy.isMet(by: evidence) else { continue }
                let today = try connection.query("SELECT count(*) FROM release_admissions WHERE app = $1 AND admitted_by = 'auto' AND admitted_at > $2",
                                                 [key.app, now - 86_400_000]).first?.int(0) ?? 0
                reason = AdmissionPolicy.reason(evidence)
                if today >= policy.releasesPerDay {
                    guard let weakest = try connection.query("""
                        SELECT a.version, a.build, (SELECT count(*) FROM release_networks n
                                                    WHERE n.app = a.app AND n.version = a.version AND n.build = a.build AND n.sessions > 0) AS networks
                        FROM release_admissions a WHERE a.app = $1 AND a.admitted_by = 'auto' AND a.admitted_at > $2
                        ORDER BY networks, a.admitted_at DESC LIMIT 1
                        """, [key.app, now - 86_400_000]).first, weakest.int(2) < evidence.networks else { continue }
                    try connection.query("DELETE FROM release_admissions WHERE app = $1 AND version = $2 AND build = $3", [key.app, weakest.text(0), weakest.text(1)])
                    reason += AdmissionPolicy.displacing(ReleaseID(version: weakest.text(0), build: weakest.text(1)), networks: weakest.int(2))
                }
            }
            try connection.query("""
                INSERT INTO release_admissions (app, version, build, state, admitted_by, admitted_at, reason) VALUES ($1, $2, $3, 'admitted', $4, $5, $6)
                ON CONFLICT DO NOTHING
                """, [key.app, key.version, key.build, policy.mode.rawValue, now, reason])
        }
    }

    /// One row per `client_dropped`; a repeated id (a re-sent batch) is not counted again.
    private func insertDrops(_ drops: [(ClientDropRecord, Int64)], _ connection: PostgresConnection) throws {
        for (drop, receivedAt) in drops.sorted(by: { ($0.0.id ?? "") < ($1.0.id ?? "") }) {
            try connection.query("""
                INSERT INTO client_drops (id, app, version, build, evicted, quarantined, received_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
                ON CONFLICT (id) DO NOTHING
                """, [drop.id, drop.app, drop.version, drop.build, drop.evicted, drop.quarantined, receivedAt])
        }
    }
}
