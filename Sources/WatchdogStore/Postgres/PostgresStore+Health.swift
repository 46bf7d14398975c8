import PostgresClient

extension PostgresStore {
    public func apps() throws -> [AppSummary] {
        try pool.withConnection { connection in
            var summaries: [String: AppSummary] = [:]
            var order: [String] = []
            for row in try connection.query("SELECT id, created_at FROM apps ORDER BY id") {
                order.append(row.text(0))
                summaries[row.text(0)] = AppSummary(app: row.text(0), createdAt: row.integer(1), releases: [])
            }
            for row in try connection.query("SELECT a.app, a.version, a.build FROM release_admissions a JOIN releases r USING (app, version, build)") {
                summaries[row.text(0)]?.releases.append(ReleaseID(version: row.text(1), build: row.text(2)))
            }
            return order.compactMap { summaries[$0] }
        }
    }

    public func releases(app: String) throws -> [ReleaseStats]? {
        try pool.withConnection { connection in
            guard !(try connection.query("SELECT 1 FROM apps WHERE id = $1", [app]).isEmpty) else { return nil }
            var releases: [ReleaseStats] = []
            var positions: [ReleaseID: Int] = [:]
            for row in try connection.query("""
                SELECT \(Self.releaseColumns) FROM release_admissions a JOIN releases r USING (app, version, build) WHERE a.app = $1
                """, [app]) {
                let stats = Self.releaseStats(row)
                positions[stats.release] = releases.count
                releases.append(stats)
            }
            // Only the listed releases' rows are read.
            for row in try connection.query("""
                SELECT k.version, k.build, k.kind, k.reports, k.suspect_reports, k.flooded_reports
                FROM release_admissions a JOIN release_kinds k USING (app, version, build) WHERE a.app = $1
                """, [app]) {
                guard let position = positions[ReleaseID(version: row.text(0), build: row.text(1))] else { continue }
                let kind = row.text(2)
                if row.int(3) > 0 { releases[position].reportsByKind[kind] = row.int(3) }
                if row.int(4) > 0 { releases[position].suspectReportsByKind[kind] = row.int(4) }
                if row.int(5) > 0 { releases[position].floodedReportsByKind[kind] = row.int(5) }
            }
            for row in try connection.query("""
                SELECT d.version, d.build, sum(d.evicted), sum(d.quarantined)
                FROM release_admissions a JOIN client_drops d USING (app, version, build) WHERE a.app = $1 GROUP BY d.version, d.build
                """, [app]) {
                guard let position = positions[ReleaseID(version: row.text(0), build: row.text(1))] else { continue }
                releases[position].clientEvicted = row.int(2)
                releases[position].clientQuarantined = row.int(3)
            }
            return releases
        }
    }

    public func releaseDetail(app: String, release: ReleaseID) throws -> ReleaseDetail? {
        try pool.withConnection { connection in
            let key: [any PostgresEncodable] = [app, release.version, release.build]
            guard let row = try connection.query("""
                SELECT \(Self.releaseColumns) FROM releases r WHERE app = $1 AND version = $2 AND build = $3
                """, key).first else { return nil }
            var stats = Self.releaseStats(row)
            for kind in try connection.query("SELECT kind, reports, suspect_reports, flooded_reports FROM release_kinds WHERE app = $1 AND version = $2 AND build = $3", key) {
                if kind.int(1) > 0 { stats.reportsByKind[kind.text(0)] = kind.int(1) }
                if kind.int(2) > 0 { stats.suspectReportsByKind[kind.text(0)] = kind.int(2) }
                if kind.int(3) > 0 { stats.floodedReportsByKind[kind.text(0)] = kind.int(3) }
            }
            let breakdown = try connection.query("""
                SELECT dimension, value, kind, reports, suspect_reports, flooded_reports FROM release_breakdown WHERE app = $1 AND version = $2 AND build = $3
                """, key).map { row in
                BreakdownRow(dimension: row.text(0), value: row.text(1), kind: row.text(2), reports: row.int(3), suspectReports: row.int(4), floodedReports: row.int(5))
            }
            var affected: [String: [String: Int]] = [:]
            for row in try connection.query("SELECT dimension, value, affected_sessions FROM release_affected WHERE app = $1 AND version = $2 AND build = $3", key) {
                affected[row.text(0), default: [:]][row.text(1)] = row.int(2)
            }
            var idioms: [String: Int] = [:]
            for row in try connection.query("SELECT idiom, sessions FROM release_idiom_sessions WHERE app = $1 AND version = $2 AND build = $3", key) {
                idioms[row.text(0)] = row.int(1)
            }
            return ReleaseDetail(stats: stats, breakdown: breakdown, sessionsByIdiom: idioms, affectedSessions: affected)
        }
    }

    private static let issueColumns = "fingerprint, version, build, kind, screen, view_name, keyboard_mode, reports, suspect_reports, affected_sessions, first_seen, last_seen, flooded_reports"

    private static func issueRow(_ row: PostgresRow) -> IssueRow {
        IssueRow(fingerprint: row.text(0), release: ReleaseID(version: row.text(1), build: row.text(2)), kind: row.text(3),
                 screen: row.optionalText(4), viewName: row.optionalText(5), keyboardMode: row.optionalText(6),
                 reports: row.int(7), suspectReports: row.int(8), affectedSessions: row.int(9),
                 firstSeen: row.integer(10), lastSeen: row.integer(11), floodedReports: row.int(12))
    }

    public func issues(app: String, release: ReleaseID) throws -> [IssueRow] {
        try pool.withConnection { connection in
            try connection.query("SELECT \(Self.issueColumns) FROM issue_releases WHERE app = $1 AND version = $2 AND build = $3",
                                 [app, release.version, release.build]).map(Self.issueRow)
        }
    }

    public func issues(app: String, release: ReleaseID, fingerprints: [String]) throws -> [IssueRow] {
        guard !fingerprints.isEmpty else { return [] }
        return try pool.withConnection { connection in
            try connection.query("""
                SELECT \(Self.issueColumns) FROM issue_releases WHERE app = $1 AND version = $2 AND build = $3 AND fingerprint = ANY($4::text[])
                """, [app, release.version, release.build, PostgresArray.text(fingerprints)]).map(Self.issueRow)
        }
    }

    public func firstReleases(app: String, fingerprints: [String], among releases: [ReleaseID]) throws -> [String: ReleaseID] {
        guard !fingerprints.isEmpty, !releases.isEmpty else { return [:] }
        let rank = Dictionary(releases.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        return try pool.withConnection { connection in
            var first: [String: (rank: Int, release: ReleaseID)] = [:]
            for row in try connection.query("""
                SELECT fingerprint, version, build FROM issue_releases WHERE app = $1 AND fingerprint = ANY($2::text[]) AND reports > 0
                """, [app, PostgresArray.text(fingerprints)]) {
                let release = ReleaseID(version: row.text(1), build: row.text(2))
                guard let position = rank[release] else { continue }
                if let known = first[row.text(0)], known.rank <= position { continue }
                first[row.text(0)] = (position, release)
            }
            return first.mapValues(\.release)
        }
    }

    public func hourly(app: String, release: ReleaseID?, kind: String?, fromHour: Int64, toHour: Int64) throws -> [HourlyRow] {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT hour, kind, sum(reports), sum(suspect_reports), sum(flooded_reports), sum(affected_sessions) FROM release_hourly
                WHERE app = $1 AND ($2::text IS NULL OR (version = $2 AND build = $3)) AND ($4::text IS NULL OR kind = $4)
                  AND hour BETWEEN $5 AND $6
                GROUP BY hour, kind ORDER BY hour, kind
                """, [app, release?.version, release?.build, kind, fromHour, toHour]).map { row in
                HourlyRow(hour: row.integer(0), kind: row.text(1), reports: row.int(2), suspectReports: row.int(3), floodedReports: row.int(4), affectedSessions: row.int(5))
            }
        }
    }

    public func keyboardHeights(app: String, release: ReleaseID?) throws -> [HeightRow] {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT model, mode, input_mode, height, sum(reports), sum(window_sized) FROM keyboard_heights
                WHERE app = $1 AND ($2::text IS NULL OR (version = $2 AND build = $3))
                GROUP BY model, mode, input_mode, height ORDER BY model, mode, input_mode, height
                """, [app, release?.version, release?.build]).map { row in
                HeightRow(model: row.text(0), mode: row.text(1), inputMode: row.text(2), height: row.int(3), reports: row.int(4), windowSized: row.int(5))
            }
        }
    }

    private static let reportColumns = "sequence, id, app, version, build, kind, fingerprint, occurred_at, received_at, suspect, body, flooded"

    private static func storedReport(_ row: PostgresRow) throws -> StoredReport {
        StoredReport(sequence: row.integer(0), id: row.text(1), app: row.text(2), release: ReleaseID(version: row.text(3), build: row.text(4)), kind: row.text(5),
                     fingerprint: row.text(6), occurredAt: row.integer(7), receivedAt: row.integer(8), suspect: row.bool(9), flooded: row.bool(11),
                     body: try StoredBody.text(fromCompressed: row.bytes(10)))
    }

    public func reports(app: String, filter: ReportFilter, before: Int64?, limit: Int) throws -> [StoredReport] {
        try pool.withConnection { connection in
            var conditions = ["app = $1"]
            var parameters: [any PostgresEncodable] = [app]
            func add(_ condition: String, _ value: any PostgresEncodable) {
                parameters.append(value)
                conditions.append(condition.replacingOccurrences(of: "?", with: "$\(parameters.count)"))
            }
            var kinds: [String?] = [filter.kind]
            if let fingerprint = filter.fingerprint { add("fingerprint = ?", fingerprint) }
            if let release = filter.release {
                add("version = ?", release.version)
                add("build = ?", release.build)
                // All kinds of one release: one page per kind, each walking (release, kind,
                // sequence), merged — as in SQLite, no index on the release alone.
                if filter.kind == nil, filter.fingerprint == nil {
                    kinds = try connection.query("SELECT kind FROM release_kinds WHERE app = $1 AND version = $2 AND build = $3",
                                                 [app, release.version, release.build]).map { $0.optionalText(0) }
                }
            }
            if let screen = filter.screen { add("screen = ?", screen) }
            if let before { add("sequence < ?", before) }
            var rows: [PostgresRow] = []
            for kind in kinds {
                var where_ = conditions
                var values = parameters
                if let kind {
                    values.append(kind)
                    where_.append("kind = $\(values.count)")
                }
                values.append(limit)
                rows += try connection.query("""
                    SELECT \(Self.reportColumns) FROM reports WHERE \(where_.joined(separator: " AND ")) ORDER BY sequence DESC LIMIT $\(values.count)
                    """, values).map { $0 }
            }
            if kinds.count > 1 { rows = Array(rows.sorted { $0.integer(0) > $1.integer(0) }.prefix(limit)) }
            return try rows.map(Self.storedReport)
        }
    }

    public func reports(id: String, app: String?) throws -> [StoredReport] {
        try pool.withConnection { connection in
            if let app {
                return try connection.query("SELECT \(Self.reportColumns) FROM reports WHERE app = $1 AND id = $2", [app, id.lowercased()]).map(Self.storedReport)
            }
            return try connection.query("""
                SELECT \(Self.reportColumns) FROM reports WHERE app = ANY(ARRAY(SELECT id FROM apps)) AND id = $1 ORDER BY app LIMIT 20
                """, [id.lowercased()]).map(Self.storedReport)
        }
    }
}
