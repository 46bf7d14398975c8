import PostgresClient

extension PostgresStore {
    public func concentration(app: String, release: ReleaseID) throws -> InstallConcentration {
        try pool.withConnection { connection in
            let key: [any PostgresEncodable] = [app, release.version, release.build]
            guard let totals = try connection.query("""
                SELECT count(*), coalesce(sum(reports), 0) FROM release_installs WHERE app = $1 AND version = $2 AND build = $3
                """, key).first, totals.int(0) > 0 else { return InstallConcentration() }
            let installs = totals.int(0)
            let top = InstallConcentration.topInstalls(among: installs)
            let topReports = try connection.query("""
                SELECT coalesce(sum(reports), 0) FROM (SELECT reports FROM release_installs WHERE app = $1 AND version = $2 AND build = $3
                                                       ORDER BY reports DESC LIMIT $4) AS top
                """, key + [top]).first?.int(0) ?? 0
            return InstallConcentration(installs: installs, topInstalls: top, reports: totals.int(1), topInstallsReports: topReports)
        }
    }

    public func installs(app: String, release: ReleaseID) throws -> [InstallRow] {
        try pool.withConnection { connection in
            let key: [any PostgresEncodable] = [app, release.version, release.build]
            var rows: [String: InstallRow] = [:]
            for row in try connection.query("""
                SELECT install_id, channel, idiom, sessions, reports, affected_sessions, network, attested_sessions, attested_affected_sessions
                FROM release_installs WHERE app = $1 AND version = $2 AND build = $3
                """, key) {
                var install = InstallRow(installID: row.text(0), channel: row.optionalText(1), idiom: row.optionalText(2), network: row.optionalText(6),
                                         sessions: row.int(3), reports: row.int(4), affectedSessions: row.int(5), kinds: [:])
                install.attestedSessions = row.int(7)
                install.attestedAffectedSessions = row.int(8)
                rows[row.text(0)] = install
            }
            for row in try connection.query("""
                SELECT install_id, kind, reports, affected_sessions, attested_affected_sessions FROM release_install_kinds WHERE app = $1 AND version = $2 AND build = $3
                """, key) {
                rows[row.text(0)]?.kinds[row.text(1)] = (row.int(2), row.int(3))
                if row.int(4) > 0 { rows[row.text(0)]?.attestedKinds[row.text(1)] = row.int(4) }
            }
            return rows.values.sorted { $0.installID < $1.installID }
        }
    }

    public func sessionsByRelease(app: String, fromHour: Int64, limit: Int) throws -> [ReleaseSessionsRow] {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT h.version, h.build, sum(h.sessions) AS sessions, sum(h.attested_sessions) FROM release_admissions a
                JOIN release_hourly_sessions h ON h.app = a.app AND h.version = a.version AND h.build = a.build AND h.hour >= $2
                WHERE a.app = $1 GROUP BY h.version, h.build HAVING sum(h.sessions) > 0 ORDER BY sessions DESC, h.version, h.build LIMIT $3
                """, [app, fromHour, Int64(limit)]).map { row in
                ReleaseSessionsRow(release: ReleaseID(version: row.text(0), build: row.text(1)), sessions: row.int(2), attestedSessions: row.int(3))
            }
        }
    }

    public func hourlySessions(app: String, release: ReleaseID?, fromHour: Int64, toHour: Int64) throws -> [HourlySessionsRow] {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT hour, sum(sessions), sum(affected_sessions) FROM release_hourly_sessions
                WHERE app = $1 AND ($2::text IS NULL OR (version = $2 AND build = $3)) AND hour BETWEEN $4 AND $5
                GROUP BY hour ORDER BY hour
                """, [app, release?.version, release?.build, fromHour, toHour]).map { HourlySessionsRow(hour: $0.integer(0), sessions: $0.int(1), affectedSessions: $0.int(2)) }
        }
    }
}
