import PostgresClient

extension PostgresStore {
    /// The columns `releaseStats` reads, of `releases r`.
    static let releaseColumns = """
        r.version, r.build, r.sessions, r.affected_sessions, r.auto_fixed, r.test_crashes, r.first_seen, r.last_seen, r.partial_history,
        r.implausible_sessions, r.unknown_session_reports
        """

    static func releaseStats(_ row: PostgresRow) -> ReleaseStats {
        var stats = ReleaseStats(
            release: ReleaseID(version: row.text(0), build: row.text(1)), sessions: row.int(2), reportsByKind: [:], suspectReportsByKind: [:],
            affectedSessions: row.int(3), autoFixed: row.int(4), testCrashes: row.int(5), firstSeen: row.integer(6), lastSeen: row.integer(7),
            partialHistory: row.bool(8))
        stats.implausibleSessions = row.int(9)
        stats.unknownSessionReports = row.int(10)
        return stats
    }

    /// Tables keyed by (app, version, build), as `SQLiteStore.releaseTables` (the session marks are too, here).
    static let releaseTables = [
        "session_issue_marks", "session_affected_marks", "session_value_marks", "reports", "sessions", "release_kinds", "release_breakdown",
        "release_hourly", "issue_releases", "keyboard_heights", "release_idiom_sessions", "release_affected", "release_installs",
        "release_install_kinds", "release_hourly_sessions", "client_drops", "release_networks", "release_admissions", "releases",
    ]

    public func releaseAdmissions(app: String) throws -> [ReleaseAdmission] {
        try auditedConnection { connection in
            try connection.query("""
                SELECT version, build, state, admitted_by, admitted_at, reason FROM release_admissions WHERE app = $1 ORDER BY admitted_at, version, build
                """, [app]).map { row in
                ReleaseAdmission(app: app, release: ReleaseID(version: row.text(0), build: row.text(1)),
                                 state: ReleaseAdmission.State(rawValue: row.text(2)) ?? .admitted, by: row.text(3), at: row.integer(4), reason: row.text(5))
            }
        }
    }

    public func admitRelease(_ admission: ReleaseAdmission) throws -> Bool {
        try auditedConnection { connection in
            guard !(try connection.query("SELECT 1 FROM apps WHERE id = $1", [admission.app]).isEmpty) else { throw StoreError.unknownApp(admission.app) }
            return try connection.query("""
                INSERT INTO release_admissions AS a (app, version, build, state, admitted_by, admitted_at, reason) VALUES ($1, $2, $3, $4, $5, $6, $7)
                ON CONFLICT (app, version, build) DO UPDATE SET state = excluded.state, admitted_by = excluded.admitted_by,
                    admitted_at = excluded.admitted_at, reason = excluded.reason
                WHERE excluded.state = 'declared' AND a.state = 'admitted'
                """, [admission.app, admission.release.version, admission.release.build, admission.state.rawValue, admission.by, admission.at,
                      admission.reason]).affected == 1
        }
    }

    public func unlistRelease(app: String, release: ReleaseID) throws -> Bool {
        try auditedConnection { connection in
            try connection.query("DELETE FROM release_admissions WHERE app = $1 AND version = $2 AND build = $3",
                                 [app, release.version, release.build]).affected == 1
        }
    }

    public func admissionEvidence(app: String, releases: [ReleaseID]) throws -> [ReleaseID: AdmissionEvidence] {
        let ids = Array(Set(releases))
        guard !ids.isEmpty else { return [:] }
        return try auditedConnection { connection in try Self.unlistedEvidence(app: app, ids, connection) }
    }

    /// The admission evidence of those of `releases` that have data and are not listed, in one query.
    static func unlistedEvidence(app: String, _ releases: [ReleaseID], _ connection: PostgresConnection) throws -> [ReleaseID: AdmissionEvidence] {
        var evidence: [ReleaseID: AdmissionEvidence] = [:]
        for row in try connection.query("""
            SELECT r.version, r.build, r.sessions,
                   (SELECT count(*) FROM release_installs i WHERE i.app = r.app AND i.version = r.version AND i.build = r.build AND i.sessions > 0),
                   (SELECT count(*) FROM release_networks n WHERE n.app = r.app AND n.version = r.version AND n.build = r.build AND n.sessions > 0)
            FROM unnest($2::text[], $3::text[]) AS k(version, build) JOIN releases r ON r.app = $1 AND r.version = k.version AND r.build = k.build
            WHERE NOT EXISTS (SELECT 1 FROM release_admissions a WHERE a.app = r.app AND a.version = r.version AND a.build = r.build)
            """, [app, PostgresArray.text(releases.map(\.version)), PostgresArray.text(releases.map(\.build))]) {
            evidence[ReleaseID(version: row.text(0), build: row.text(1))] = AdmissionEvidence(sessions: row.int(2), installs: row.int(3), networks: row.int(4))
        }
        return evidence
    }

    public func unlistedReleases(app: String, offset: Int, limit: Int) throws -> UnlistedReleases {
        try auditedConnection { connection in
            var result = UnlistedReleases()
            let unlisted = "FROM releases r WHERE r.app = $1 AND NOT EXISTS (SELECT 1 FROM release_admissions a WHERE a.app = r.app AND a.version = r.version AND a.build = r.build)"
            if let totals = try connection.query("SELECT count(*), coalesce(sum(r.sessions), 0), coalesce(sum(r.implausible_sessions), 0) \(unlisted)", [app]).first {
                result.total = totals.int(0)
                result.sessions = totals.int(1)
                result.implausibleSessions = totals.int(2)
            }
            result.reports = try connection.query("""
                SELECT coalesce(sum(k.reports + k.suspect_reports + k.flooded_reports), 0) FROM release_kinds k WHERE k.app = $1
                AND NOT EXISTS (SELECT 1 FROM release_admissions a WHERE a.app = k.app AND a.version = k.version AND a.build = k.build)
                """, [app]).first?.int(0) ?? 0
            result.page = try connection.query("""
                SELECT \(Self.releaseColumns) \(unlisted) ORDER BY r.sessions + r.implausible_sessions DESC, r.version, r.build LIMIT $2 OFFSET $3
                """, [app, limit, offset]).map(Self.releaseStats)
            for index in result.page.indices {
                let id = result.page[index].release
                for row in try connection.query("SELECT kind, reports, suspect_reports, flooded_reports FROM release_kinds WHERE app = $1 AND version = $2 AND build = $3",
                                                [app, id.version, id.build]) {
                    if row.int(1) > 0 { result.page[index].reportsByKind[row.text(0)] = row.int(1) }
                    if row.int(2) > 0 { result.page[index].suspectReportsByKind[row.text(0)] = row.int(2) }
                    if row.int(3) > 0 { result.page[index].floodedReportsByKind[row.text(0)] = row.int(3) }
                }
            }
            return result
        }
    }

    public func deleteRelease(app: String, release: ReleaseID) throws -> Int {
        try auditedTransaction { connection in
            let key: [any PostgresEncodable] = [app, release.version, release.build]
            var deleted = try connection.query("""
                DELETE FROM report_keys k USING reports r WHERE r.app = $1 AND r.version = $2 AND r.build = $3 AND k.app = r.app AND k.id = r.id
                """, key).affected
            for table in Self.releaseTables {
                deleted += try connection.query("DELETE FROM \(table) WHERE app = $1 AND version = $2 AND build = $3", key).affected
            }
            try connection.query("""
                DELETE FROM alert_firings WHERE release_version = $2 AND release_build = $3 AND rule_id IN (SELECT id FROM alert_rules WHERE app = $1)
                """, key)
            return deleted
        }
    }

    public func admissionSettings(app: String) throws -> String? {
        try auditedConnection { connection in
            try connection.query("SELECT settings FROM app_admission WHERE app = $1", [app]).first?.text(0)
        }
    }

    public func saveAdmissionSettings(app: String, json: String) throws {
        try auditedConnection { connection in
            guard !(try connection.query("SELECT 1 FROM apps WHERE id = $1", [app]).isEmpty) else { throw StoreError.unknownApp(app) }
            try connection.query("INSERT INTO app_admission (app, settings) VALUES ($1, $2) ON CONFLICT (app) DO UPDATE SET settings = excluded.settings", [app, json])
        }
    }

    public func listedReleaseNetworks(app: String) throws -> [ReleaseID: Int] {
        try pool.withConnection { connection in
            var networks: [ReleaseID: Int] = [:]
            for row in try connection.query("""
                SELECT n.version, n.build, count(*) FROM release_networks n
                JOIN release_admissions a ON a.app = n.app AND a.version = n.version AND a.build = n.build
                WHERE n.app = $1 AND n.sessions > 0 GROUP BY n.version, n.build
                """, [app]) {
                networks[ReleaseID(version: row.text(0), build: row.text(1))] = row.int(2)
            }
            return networks
        }
    }

    public func sessionConcentration(app: String, release: ReleaseID) throws -> SessionConcentration {
        try auditedConnection { connection in
            let key: [any PostgresEncodable] = [app, release.version, release.build]
            var result = SessionConcentration()
            result.sessions = try connection.query("SELECT sessions FROM releases WHERE app = $1 AND version = $2 AND build = $3", key).first?.int(0) ?? 0
            result.installs = try connection.query("SELECT count(*) FROM release_installs WHERE app = $1 AND version = $2 AND build = $3 AND sessions > 0",
                                                   key).first?.int(0) ?? 0
            result.topInstalls = InstallConcentration.topInstalls(among: result.installs)
            result.topInstallsSessions = try connection.query("""
                SELECT coalesce(sum(sessions), 0) FROM (SELECT sessions FROM release_installs WHERE app = $1 AND version = $2 AND build = $3
                                                        ORDER BY sessions DESC LIMIT $4) AS top
                """, key + [result.topInstalls]).first?.int(0) ?? 0
            if let networks = try connection.query("""
                SELECT count(*), coalesce(max(sessions), 0) FROM release_networks WHERE app = $1 AND version = $2 AND build = $3 AND sessions > 0
                """, key).first {
                result.networks = networks.int(0)
                result.topNetworkSessions = networks.int(1)
            }
            result.busiestHourSessions = try connection.query("""
                SELECT coalesce(max(sessions), 0) FROM release_hourly_sessions WHERE app = $1 AND version = $2 AND build = $3
                """, key).first?.int(0) ?? 0
            return result
        }
    }
}
