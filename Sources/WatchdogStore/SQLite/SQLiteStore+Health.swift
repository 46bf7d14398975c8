import GRDB

extension SQLiteStore {
    public func releaseDetail(app: String, release: ReleaseID) throws -> ReleaseDetail? {
        try pool.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM releases WHERE app = ? AND version = ? AND build = ?",
                                             arguments: [app, release.version, release.build]) else { return nil }
            var stats = ReleaseStats(release: release, sessions: row["sessions"], reportsByKind: [:], suspectReportsByKind: [:],
                                     affectedSessions: row["affected_sessions"], autoFixed: row["auto_fixed"], testCrashes: row["test_crashes"],
                                     firstSeen: row["first_seen"], lastSeen: row["last_seen"], partialHistory: row["partial_history"])
            stats.implausibleSessions = row["implausible_sessions"]
            stats.unknownSessionReports = row["unknown_session_reports"]
            for kind in try Row.fetchAll(db, sql: "SELECT kind, reports, suspect_reports, flooded_reports FROM release_kinds WHERE app = ? AND version = ? AND build = ?",
                                         arguments: [app, release.version, release.build]) {
                let name: String = kind[0]
                let reports: Int = kind[1]
                let suspect: Int = kind[2]
                let flooded: Int = kind[3]
                if reports > 0 { stats.reportsByKind[name] = reports }
                if suspect > 0 { stats.suspectReportsByKind[name] = suspect }
                if flooded > 0 { stats.floodedReportsByKind[name] = flooded }
            }
            let breakdown = try Row.fetchAll(db, sql: """
                SELECT dimension, value, kind, reports, suspect_reports, flooded_reports FROM release_breakdown WHERE app = ? AND version = ? AND build = ?
                """, arguments: [app, release.version, release.build]).map { row in
                BreakdownRow(dimension: row[0], value: row[1], kind: row[2], reports: row[3], suspectReports: row[4], floodedReports: row[5])
            }
            var affected: [String: [String: Int]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT dimension, value, affected_sessions FROM release_affected WHERE app = ? AND version = ? AND build = ?",
                                        arguments: [app, release.version, release.build]) {
                affected[row[0], default: [:]][row[1]] = row[2]
            }
            var idioms: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT idiom, sessions FROM release_idiom_sessions WHERE app = ? AND version = ? AND build = ?",
                                        arguments: [app, release.version, release.build]) {
                idioms[row["idiom"]] = row["sessions"]
            }
            return ReleaseDetail(stats: stats, breakdown: breakdown, sessionsByIdiom: idioms, affectedSessions: affected)
        }
    }

    public func issues(app: String, release: ReleaseID) throws -> [IssueRow] {
        try pool.read { db in
            var rows: [IssueRow] = []
            try db.cachedStatement(sql: "SELECT \(Self.issueColumns) FROM issue_releases WHERE app = ? AND version = ? AND build = ?")
                .forEachRow(db, bind: { bind in
                    bind.text(app)
                    bind.text(release.version)
                    bind.text(release.build)
                }) { rows.append(Self.issueRow($0)) }
            return rows
        }
    }

    public func issues(app: String, release: ReleaseID, fingerprints: [String]) throws -> [IssueRow] {
        guard !fingerprints.isEmpty else { return [] }
        return try pool.read { db in
            var rows: [IssueRow] = []
            // One primary-key probe per fingerprint.
            let statement = try db.cachedStatement(sql: "SELECT \(Self.issueColumns) FROM issue_releases WHERE app = ? AND version = ? AND build = ? AND fingerprint = ?")
            for fingerprint in fingerprints {
                try statement.forEachRow(db, bind: { bind in
                    bind.text(app)
                    bind.text(release.version)
                    bind.text(release.build)
                    bind.text(fingerprint)
                }) { rows.append(Self.issueRow($0)) }
            }
            return rows
        }
    }

    public func firstReleases(app: String, fingerprints: [String], among releases: [ReleaseID]) throws -> [String: ReleaseID] {
        guard !fingerprints.isEmpty, !releases.isEmpty else { return [:] }
        let rank = Dictionary(releases.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        return try pool.read { db in
            // The releases a fingerprint has a row in come from its index alone (it holds the
            // primary key's version and build); only the earliest candidates are then probed
            // for headline reports, one primary-key lookup each, instead of reading every
            // release's row of every fingerprint.
            let candidates = try db.cachedStatement(sql: """
                SELECT version, build FROM issue_releases INDEXED BY issue_releases_by_fingerprint WHERE app = ? AND fingerprint = ?
                """)
            let reports = try db.cachedStatement(sql: "SELECT reports FROM issue_releases WHERE app = ? AND version = ? AND build = ? AND fingerprint = ?")
            var first: [String: ReleaseID] = [:]
            for fingerprint in fingerprints where first[fingerprint] == nil {
                var ranked: [(rank: Int, release: ReleaseID)] = []
                try candidates.forEachRow(db, bind: { bind in
                    bind.text(app)
                    bind.text(fingerprint)
                }) { row in
                    let release = ReleaseID(version: row.text(0), build: row.text(1))
                    if let position = rank[release] { ranked.append((position, release)) }
                }
                ranked.sort { $0.rank < $1.rank }
                for candidate in ranked {
                    let headline = try reports.step(db) { bind in
                        bind.text(app)
                        bind.text(candidate.release.version)
                        bind.text(candidate.release.build)
                        bind.text(fingerprint)
                    }
                    if let headline, headline > 0 {
                        first[fingerprint] = candidate.release
                        break
                    }
                }
            }
            return first
        }
    }

    // Rows are read by position through SQLite's C API: GRDB's lookup by column name lowercases
    // names on every access, and its generic decoding was most of the time of /issues over a
    // few thousand history rows.
    private static let issueColumns = "fingerprint, version, build, kind, screen, view_name, keyboard_mode, reports, suspect_reports, affected_sessions, first_seen, last_seen, flooded_reports"

    private static func issueRow(_ row: StatementColumns) -> IssueRow {
        IssueRow(fingerprint: row.text(0), release: ReleaseID(version: row.text(1), build: row.text(2)), kind: row.text(3),
                 screen: row.optionalText(4), viewName: row.optionalText(5), keyboardMode: row.optionalText(6),
                 reports: Int(row.integer(7)), suspectReports: Int(row.integer(8)), affectedSessions: Int(row.integer(9)),
                 firstSeen: row.integer(10), lastSeen: row.integer(11), floodedReports: Int(row.integer(12)))
    }

    public func hourly(app: String, release: ReleaseID?, kind: String?, fromHour: Int64, toHour: Int64) throws -> [HourlyRow] {
        try pool.read { db in
            var sql = "SELECT hour, kind, sum(reports) AS reports, sum(suspect_reports) AS suspect, sum(flooded_reports) AS flooded, sum(affected_sessions) FROM release_hourly WHERE app = ?"
            var arguments: [(any DatabaseValueConvertible)?] = [app]
            if let release {
                sql += " AND version = ? AND build = ?"
                arguments += [release.version, release.build]
            }
            if let kind {
                sql += " AND kind = ?"
                arguments.append(kind)
            }
            sql += " AND hour BETWEEN ? AND ? GROUP BY hour, kind ORDER BY hour"
            arguments += [fromHour, toHour]
            return try Row.fetchAll(db.cachedStatement(sql: sql), arguments: StatementArguments(arguments)).map { row in
                HourlyRow(hour: row[0], kind: row[1], reports: row[2], suspectReports: row[3], floodedReports: row[4], affectedSessions: row[5])
            }
        }
    }

    public func keyboardHeights(app: String, release: ReleaseID?) throws -> [HeightRow] {
        try pool.read { db in
            var sql = "SELECT model, mode, input_mode, height, sum(reports) AS reports, sum(window_sized) AS window_sized FROM keyboard_heights WHERE app = ?"
            var arguments: [(any DatabaseValueConvertible)?] = [app]
            if let release {
                sql += " AND version = ? AND build = ?"
                arguments += [release.version, release.build]
            }
            sql += " GROUP BY model, mode, input_mode, height"
            return try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)).map { row in
                HeightRow(model: row[0], mode: row[1], inputMode: row[2], height: row[3], reports: row[4], windowSized: row[5])
            }
        }
    }

    public func reports(app: String, filter: ReportFilter, before: Int64?, limit: Int) throws -> [StoredReport] {
        try pool.read { db in
            // Reports hold numbers for their texts (`ReportTexts`): a text no report was ever
            // stored with matches nothing.
            guard let appNumber = try ReportTexts.number(of: app, db) else { return [] }
            var release: Int64?
            if let id = filter.release {
                guard let ref = try ReportTexts.ref(app: app, version: id.version, build: id.build, db) else { return [] }
                release = ref
            }
            var kinds: [Int64?] = [nil]
            if let kind = filter.kind {
                guard let number = try ReportTexts.number(of: kind, db) else { return [] }
                kinds = [number]
            }
            // The index is chosen here, not by the planner: without ANALYZE statistics SQLite
            // picked an index on `app` and sorted every row of the app for each page (302 s to
            // export 1 M reports). Each choice below walks rows already in rowid order.
            var conditions: [String] = []
            var arguments: [(any DatabaseValueConvertible)?] = []
            var index = ""
            if let fingerprint = filter.fingerprint {
                index = "INDEXED BY reports_by_fingerprint"
                conditions += ["app = ?", "fingerprint = ?"]
                arguments += [appNumber, CompactFingerprint.databaseValue(fingerprint)]
                if let release {
                    conditions.append("release = ?")
                    arguments.append(release)
                }
            } else if let release, let id = filter.release {
                index = "INDEXED BY reports_by_release_kind"
                conditions.append("release = ?")
                arguments.append(release)
                // All kinds: one page per kind the release has (a handful), each in rowid order
                // on (release, kind), merged — no index on the release alone to keep up.
                if filter.kind == nil {
                    kinds = try Int64.fetchAll(db, sql: """
                        SELECT v.number FROM release_kinds k JOIN mark_values v ON v.value = k.kind WHERE k.app = ? AND k.version = ? AND k.build = ?
                        """, arguments: [app, id.version, id.build])
                }
            } else {
                // Newest first over the whole table by rowid; `+app` keeps SQLite off the app indexes.
                conditions.append("+app = ?")
                arguments.append(appNumber)
            }
            if let screen = filter.screen {
                guard let number = try ReportTexts.number(of: screen, db) else { return [] }
                conditions.append("screen = ?")
                arguments.append(number)
            }
            if let before {
                conditions.append("rowid < ?")
                arguments.append(before)
            }
            var rows: [Row] = []
            for kind in kinds {
                let kindCondition = kind == nil ? [] : ["kind = ?"]
                let sql = "SELECT \(Self.reportColumns) FROM reports \(index) WHERE \((conditions + kindCondition).joined(separator: " AND ")) ORDER BY rowid DESC LIMIT ?"
                let values = arguments + (kind.map { [$0] } ?? []) + [limit]
                rows += try Row.fetchAll(db, sql: sql, arguments: StatementArguments(values))
            }
            if kinds.count > 1 { rows = Array(rows.sorted { ($0[0] as Int64) > ($1[0] as Int64) }.prefix(limit)) }
            var texts = ReportTexts()
            return try rows.map { try Self.storedReport($0, &texts, db) }
        }
    }

    public func reports(id: String, app: String?) throws -> [StoredReport] {
        try pool.read { db in
            var texts = ReportTexts()
            if let app {
                guard let number = try ReportTexts.number(of: app, db) else { return [] }
                return try Row.fetchAll(db, sql: "SELECT \(Self.reportColumns) FROM reports WHERE app = ? AND id = ?",
                                        arguments: [number, CompactID.databaseValue(id.lowercased())])
                    .map { try Self.storedReport($0, &texts, db) }
            }
            // One primary-key probe per app (apps are few): no index on id alone to keep up.
            return try Row.fetchAll(db, sql: """
                SELECT \(Self.reportColumns) FROM reports
                WHERE app IN (SELECT v.number FROM apps JOIN mark_values v ON v.value = apps.id) AND id = ?
                """, arguments: [CompactID.databaseValue(id.lowercased())])
                .map { try Self.storedReport($0, &texts, db) }
                .sorted { $0.app < $1.app }.prefix(20).map { $0 }
        }
    }

    private static let reportColumns = "rowid, id, release, kind, fingerprint, occurred_at, received_at, suspect, body, flooded"

    private static func storedReport(_ row: Row, _ texts: inout ReportTexts, _ db: Database) throws -> StoredReport {
        let release = try texts.release(row[2], db)
        return StoredReport(sequence: row[0], id: CompactID.text(from: row[1]), app: release.app, release: ReleaseID(version: release.version, build: release.build),
                            kind: try texts.value(row[3], db), fingerprint: CompactFingerprint.text(from: row[4]), occurredAt: row[5], receivedAt: row[6],
                            suspect: row[7], flooded: row[9], body: try StoredBody.text(from: row[8]))
    }
}
