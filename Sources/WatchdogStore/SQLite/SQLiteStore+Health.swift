import GRDB

extension SQLiteStore {
    public func releaseDetail(app: String, release: ReleaseID) throws -> ReleaseDetail? {
        try pool.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM releases WHERE app = ? AND version = ? AND build = ?",
                                             arguments: [app, release.version, release.build]) else { return nil }
            var stats = ReleaseStats(release: release, sessions: row["sessions"], reportsByKind: [:], suspectReportsByKind: [:],
                                     affectedSessions: row["affected_sessions"], autoFixed: row["auto_fixed"], testCrashes: row["test_crashes"],
                                     firstSeen: row["first_seen"], lastSeen: row["last_seen"])
            for kind in try Row.fetchAll(db, sql: "SELECT kind, reports, suspect_reports FROM release_kinds WHERE app = ? AND version = ? AND build = ?",
                                         arguments: [app, release.version, release.build]) {
                let name: String = kind["kind"]
                let reports: Int = kind["reports"]
                let suspect: Int = kind["suspect_reports"]
                if reports > 0 { stats.reportsByKind[name] = reports }
                if suspect > 0 { stats.suspectReportsByKind[name] = suspect }
            }
            let breakdown = try Row.fetchAll(db, sql: """
                SELECT dimension, value, kind, reports, suspect_reports FROM release_breakdown WHERE app = ? AND version = ? AND build = ?
                """, arguments: [app, release.version, release.build]).map { row in
                BreakdownRow(dimension: row["dimension"], value: row["value"], kind: row["kind"], reports: row["reports"], suspectReports: row["suspect_reports"])
            }
            var idioms: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT idiom, sessions FROM release_idiom_sessions WHERE app = ? AND version = ? AND build = ?",
                                        arguments: [app, release.version, release.build]) {
                idioms[row["idiom"]] = row["sessions"]
            }
            return ReleaseDetail(stats: stats, breakdown: breakdown, sessionsByIdiom: idioms)
        }
    }

    public func issues(app: String, release: ReleaseID) throws -> [IssueRow] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM issue_releases WHERE app = ? AND version = ? AND build = ?",
                             arguments: [app, release.version, release.build]).map(Self.issueRow)
        }
    }

    public func issueHistory(app: String, fingerprints: [String]) throws -> [IssueRow] {
        guard !fingerprints.isEmpty else { return [] }
        return try pool.read { db in
            var rows: [IssueRow] = []
            // Chunks stay under SQLite's bound-parameter limit.
            for start in stride(from: 0, to: fingerprints.count, by: 500) {
                let chunk = Array(fingerprints[start..<min(start + 500, fingerprints.count)])
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                rows += try Row.fetchAll(db, sql: "SELECT * FROM issue_releases WHERE app = ? AND fingerprint IN (\(marks))",
                                         arguments: StatementArguments([app] + chunk)).map(Self.issueRow)
            }
            return rows
        }
    }

    private static func issueRow(_ row: Row) -> IssueRow {
        IssueRow(fingerprint: row["fingerprint"], release: ReleaseID(version: row["version"], build: row["build"]), kind: row["kind"],
                 screen: row["screen"], viewName: row["view_name"], keyboardMode: row["keyboard_mode"], reports: row["reports"],
                 suspectReports: row["suspect_reports"], affectedSessions: row["affected_sessions"], firstSeen: row["first_seen"], lastSeen: row["last_seen"])
    }

    public func hourly(app: String, release: ReleaseID?, kind: String?, fromHour: Int64, toHour: Int64) throws -> [HourlyRow] {
        try pool.read { db in
            var sql = "SELECT hour, kind, sum(reports) AS reports, sum(suspect_reports) AS suspect FROM release_hourly WHERE app = ?"
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
            return try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)).map { row in
                HourlyRow(hour: row["hour"], kind: row["kind"], reports: row["reports"], suspectReports: row["suspect"])
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
                HeightRow(model: row["model"], mode: row["mode"], inputMode: row["input_mode"], height: row["height"],
                          reports: row["reports"], windowSized: row["window_sized"])
            }
        }
    }

    public func reports(app: String, filter: ReportFilter, before: Int64?, limit: Int) throws -> [StoredReport] {
        try pool.read { db in
            var sql = "SELECT rowid AS sequence, * FROM reports WHERE app = ?"
            var arguments: [(any DatabaseValueConvertible)?] = [app]
            if let release = filter.release {
                sql += " AND version = ? AND build = ?"
                arguments += [release.version, release.build]
            }
            if let kind = filter.kind {
                sql += " AND kind = ?"
                arguments.append(kind)
            }
            if let screen = filter.screen {
                sql += " AND screen = ?"
                arguments.append(screen)
            }
            if let fingerprint = filter.fingerprint {
                sql += " AND fingerprint = ?"
                arguments.append(fingerprint)
            }
            if let before {
                sql += " AND rowid < ?"
                arguments.append(before)
            }
            sql += " ORDER BY rowid DESC LIMIT ?"
            arguments.append(limit)
            return try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)).map(Self.storedReport)
        }
    }

    public func report(id: String) throws -> StoredReport? {
        try pool.read { db in
            try Row.fetchOne(db, sql: "SELECT rowid AS sequence, * FROM reports WHERE id = ?", arguments: [id.lowercased()]).map(Self.storedReport)
        }
    }

    private static func storedReport(_ row: Row) -> StoredReport {
        StoredReport(sequence: row["sequence"], id: row["id"], app: row["app"], release: ReleaseID(version: row["version"], build: row["build"]),
                     kind: row["kind"], fingerprint: row["fingerprint"], occurredAt: row["occurred_at"], receivedAt: row["received_at"],
                     suspect: row["suspect"], body: row["body"])
    }
}
