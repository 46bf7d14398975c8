import GRDB

extension SQLiteStore {
    /// Tables keyed by (app, version, build): what deleting a release deletes, besides the
    /// reports and session marks keyed by its `release_refs` number and the alert firings naming it.
    static let releaseTables = [
        "sessions", "release_kinds", "release_breakdown", "release_hourly", "issue_releases", "keyboard_heights",
        "release_idiom_sessions", "release_affected", "release_installs", "release_install_kinds", "release_hourly_sessions",
        "client_drops", "release_networks", "release_admissions", "releases",
    ]

    public func releaseAdmissions(app: String) throws -> [ReleaseAdmission] {
        try pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT version, build, state, admitted_by, admitted_at, reason FROM release_admissions WHERE app = ? ORDER BY admitted_at, version, build
                """, arguments: [app]).map { row in
                ReleaseAdmission(app: app, release: ReleaseID(version: row[0], build: row[1]), state: ReleaseAdmission.State(rawValue: row[2]) ?? .admitted,
                                 by: row[3], at: row[4], reason: row[5])
            }
        }
    }

    public func admitRelease(_ admission: ReleaseAdmission) throws -> Bool {
        try auditedWrite { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM apps WHERE id = ?", arguments: [admission.app]) != nil else {
                throw StoreError.unknownApp(admission.app)
            }
            // A declaration replaces an admission; an admission never replaces a declaration.
            try db.execute(sql: """
                INSERT INTO release_admissions (app, version, build, state, admitted_by, admitted_at, reason) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT DO UPDATE SET state = excluded.state, admitted_by = excluded.admitted_by, admitted_at = excluded.admitted_at, reason = excluded.reason
                WHERE excluded.state = 'declared' AND state = 'admitted'
                """, arguments: [admission.app, admission.release.version, admission.release.build, admission.state.rawValue, admission.by, admission.at, admission.reason])
            return db.changesCount == 1
        }
    }

    public func unlistRelease(app: String, release: ReleaseID) throws -> Bool {
        try auditedWrite { db in
            try db.execute(sql: "DELETE FROM release_admissions WHERE app = ? AND version = ? AND build = ?", arguments: [app, release.version, release.build])
            return db.changesCount == 1
        }
    }

    public func admissionEvidence(app: String, releases: [ReleaseID]) throws -> [ReleaseID: AdmissionEvidence] {
        try pool.read { db in
            var evidence: [ReleaseID: AdmissionEvidence] = [:]
            for id in Set(releases) {
                evidence[id] = try Self.unlistedEvidence(Rollup.ReleaseKey(app: app, version: id.version, build: id.build), db)
            }
            return evidence
        }
    }

    /// A release's evidence for admission: `nil` when it is listed already or has no data.
    /// One primary-key probe for a listed release; for an unlisted one, its roll-up row and a
    /// count of its installs and of its networks.
    static func unlistedEvidence(_ key: Rollup.ReleaseKey, _ db: Database) throws -> AdmissionEvidence? {
        func bind(_ bind: inout StatementBinder) {
            bind.text(key.app)
            bind.text(key.version)
            bind.text(key.build)
        }
        guard try db.cachedStatement(sql: "SELECT 1 FROM release_admissions WHERE app = ? AND version = ? AND build = ?").step(db, bind: bind) == nil,
              let sessions = try db.cachedStatement(sql: "SELECT sessions FROM releases WHERE app = ? AND version = ? AND build = ?").step(db, bind: bind)
        else { return nil }
        let installs = try db.cachedStatement(sql: "SELECT count(*) FROM release_installs WHERE app = ? AND version = ? AND build = ? AND sessions > 0")
        let networks = try db.cachedStatement(sql: "SELECT count(*) FROM release_networks WHERE app = ? AND version = ? AND build = ? AND sessions > 0")
        return AdmissionEvidence(sessions: Int(sessions), installs: Int(try installs.step(db, bind: bind) ?? 0), networks: Int(try networks.step(db, bind: bind) ?? 0))
    }

    public func unlistedReleases(app: String, offset: Int, limit: Int) throws -> UnlistedReleases {
        try pool.read { db in
            var result = UnlistedReleases()
            let unlisted = "FROM releases r WHERE r.app = ? AND NOT EXISTS (SELECT 1 FROM release_admissions a WHERE a.app = r.app AND a.version = r.version AND a.build = r.build)"
            if let totals = try Row.fetchOne(db, sql: "SELECT count(*), total(r.sessions), total(r.implausible_sessions) \(unlisted)", arguments: [app]) {
                result.total = totals[0]
                result.sessions = Int(totals[1] as Double)
                result.implausibleSessions = Int(totals[2] as Double)
            }
            result.reports = Int(try Double.fetchOne(db, sql: """
                SELECT total(k.reports + k.suspect_reports + k.flooded_reports) FROM release_kinds k WHERE k.app = ?
                AND NOT EXISTS (SELECT 1 FROM release_admissions a WHERE a.app = k.app AND a.version = k.version AND a.build = k.build)
                """, arguments: [app]) ?? 0)
            try db.cachedStatement(sql: """
                SELECT \(Self.releaseColumns) \(unlisted) ORDER BY r.sessions + r.implausible_sessions DESC, r.version, r.build LIMIT ? OFFSET ?
                """).forEachRow(db, bind: { bind in
                bind.text(app)
                bind.integer(limit)
                bind.integer(offset)
            }) { result.page.append(Self.releaseStats($0)) }
            let kinds = try db.cachedStatement(sql: "SELECT kind, reports, suspect_reports, flooded_reports FROM release_kinds WHERE app = ? AND version = ? AND build = ?")
            for index in result.page.indices {
                let id = result.page[index].release
                try kinds.forEachRow(db, bind: { bind in
                    bind.text(app)
                    bind.text(id.version)
                    bind.text(id.build)
                }) { row in
                    let kind = row.text(0)
                    if row.integer(1) > 0 { result.page[index].reportsByKind[kind] = Int(row.integer(1)) }
                    if row.integer(2) > 0 { result.page[index].suspectReportsByKind[kind] = Int(row.integer(2)) }
                    if row.integer(3) > 0 { result.page[index].floodedReportsByKind[kind] = Int(row.integer(3)) }
                }
            }
            return result
        }
    }

    public func deleteRelease(app: String, release: ReleaseID) throws -> Int {
        let deleted = try auditedWrite { db in
            let arguments: StatementArguments = [app, release.version, release.build]
            var deleted = 0
            if let ref = try Int64.fetchOne(db, sql: "SELECT ref FROM release_refs WHERE app = ? AND version = ? AND build = ?", arguments: arguments) {
                for table in ["reports", "session_issue_marks", "session_affected_marks", "session_value_marks"] {
                    try db.execute(sql: "DELETE FROM \(table) WHERE release = ?", arguments: [ref])
                    deleted += db.changesCount
                }
            }
            for table in Self.releaseTables {
                try db.execute(sql: "DELETE FROM \(table) WHERE app = ? AND version = ? AND build = ?", arguments: arguments)
                deleted += db.changesCount
            }
            try db.execute(sql: """
                DELETE FROM alert_firings WHERE release_version = ? AND release_build = ? AND rule_id IN (SELECT id FROM alert_rules WHERE app = ?)
                """, arguments: [release.version, release.build, app])
            return deleted
        }
        return deleted
    }

    public func admissionSettings(app: String) throws -> String? {
        try pool.read { db in try String.fetchOne(db, sql: "SELECT settings FROM app_admission WHERE app = ?", arguments: [app]) }
    }

    public func saveAdmissionSettings(app: String, json: String) throws {
        try auditedWrite { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM apps WHERE id = ?", arguments: [app]) != nil else { throw StoreError.unknownApp(app) }
            try db.execute(sql: "INSERT INTO app_admission (app, settings) VALUES (?, ?) ON CONFLICT DO UPDATE SET settings = excluded.settings",
                           arguments: [app, json])
        }
    }

    public func listedReleaseNetworks(app: String) throws -> [ReleaseID: Int] {
        try pool.read { db in
            var networks: [ReleaseID: Int] = [:]
            for row in try Row.fetchAll(db, sql: """
                SELECT n.version, n.build, count(*) FROM release_networks n
                JOIN release_admissions a ON a.app = n.app AND a.version = n.version AND a.build = n.build
                WHERE n.app = ? AND n.sessions > 0 GROUP BY n.version, n.build
                """, arguments: [app]) {
                networks[ReleaseID(version: row[0], build: row[1])] = row[2]
            }
            return networks
        }
    }

    public func sessionConcentration(app: String, release: ReleaseID) throws -> SessionConcentration {
        try pool.read { db in
            let arguments: StatementArguments = [app, release.version, release.build]
            var result = SessionConcentration()
            result.sessions = try Int.fetchOne(db, sql: "SELECT sessions FROM releases WHERE app = ? AND version = ? AND build = ?", arguments: arguments) ?? 0
            result.installs = try Int.fetchOne(db, sql: "SELECT count(*) FROM release_installs WHERE app = ? AND version = ? AND build = ? AND sessions > 0",
                                               arguments: arguments) ?? 0
            result.topInstalls = InstallConcentration.topInstalls(among: result.installs)
            result.topInstallsSessions = try Int.fetchOne(db, sql: """
                SELECT coalesce(sum(sessions), 0) FROM (SELECT sessions FROM release_installs WHERE app = ? AND version = ? AND build = ?
                                                        ORDER BY sessions DESC LIMIT ?)
                """, arguments: arguments + [result.topInstalls]) ?? 0
            if let networks = try Row.fetchOne(db, sql: """
                SELECT count(*), coalesce(max(sessions), 0) FROM release_networks WHERE app = ? AND version = ? AND build = ? AND sessions > 0
                """, arguments: arguments) {
                result.networks = networks[0]
                result.topNetworkSessions = networks[1]
            }
            result.busiestHourSessions = try Int.fetchOne(db, sql: """
                SELECT coalesce(max(sessions), 0) FROM release_hourly_sessions WHERE app = ? AND version = ? AND build = ?
                """, arguments: arguments) ?? 0
            return result
        }
    }
}
