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

    public func installClusterSums(app: String, release: ReleaseID) throws -> InstallClusterSums {
        try pool.withConnection { connection in
            let key: [any PostgresEncodable] = [app, release.version, release.build]
            var sums = InstallClusterSums()
            // Affected sessions are capped at the install's sessions, as the rates cap them.
            if let row = try connection.query("""
                SELECT count(*), coalesce(sum(sessions), 0), coalesce(sum(least(affected_sessions, sessions)), 0),
                       coalesce(sum(sessions::float8 * sessions), 0), coalesce(sum(least(affected_sessions, sessions)::float8 * sessions), 0),
                       coalesce(sum(least(affected_sessions, sessions)::float8 * least(affected_sessions, sessions)), 0)
                FROM release_installs WHERE app = $1 AND version = $2 AND build = $3 AND sessions > 0
                """, key).first {
                sums.overall = ClusterSums(clusters: row.int(0), sessions: row.int(1), affected: row.int(2),
                                           sessionsSquared: row.double(3), affectedTimesSessions: row.double(4), affectedSquared: row.double(5))
            }
            for row in try connection.query("""
                SELECT k.kind, coalesce(sum(least(k.affected_sessions, i.sessions)), 0),
                       coalesce(sum(least(k.affected_sessions, i.sessions)::float8 * i.sessions), 0),
                       coalesce(sum(least(k.affected_sessions, i.sessions)::float8 * least(k.affected_sessions, i.sessions)), 0)
                FROM release_install_kinds k JOIN release_installs i
                     ON i.app = k.app AND i.version = k.version AND i.build = k.build AND i.install_id = k.install_id
                WHERE k.app = $1 AND k.version = $2 AND k.build = $3 AND i.sessions > 0 AND k.affected_sessions > 0
                GROUP BY k.kind
                """, key) {
                // Installs without this kind contribute nᵢ² only: the clusters, their sessions
                // and Σ nᵢ² are those of all installs.
                sums.byKind[row.text(0)] = ClusterSums(clusters: sums.overall.clusters, sessions: sums.overall.sessions, affected: row.int(1),
                                                       sessionsSquared: sums.overall.sessionsSquared, affectedTimesSessions: row.double(2), affectedSquared: row.double(3))
            }
            return sums
        }
    }

    public func installs(app: String, release: ReleaseID) throws -> [InstallRow] {
        try pool.withConnection { connection in
            let key: [any PostgresEncodable] = [app, release.version, release.build]
            var rows: [String: InstallRow] = [:]
            for row in try connection.query("""
                SELECT install_id, channel, idiom, sessions, reports, affected_sessions FROM release_installs WHERE app = $1 AND version = $2 AND build = $3
                """, key) {
                rows[row.text(0)] = InstallRow(installID: row.text(0), channel: row.optionalText(1), idiom: row.optionalText(2), sessions: row.int(3),
                                               reports: row.int(4), affectedSessions: row.int(5), kinds: [:])
            }
            for row in try connection.query("""
                SELECT install_id, kind, reports, affected_sessions FROM release_install_kinds WHERE app = $1 AND version = $2 AND build = $3
                """, key) {
                rows[row.text(0)]?.kinds[row.text(1)] = (row.int(2), row.int(3))
            }
            return rows.values.sorted { $0.installID < $1.installID }
        }
    }

    public func hourlySessions(app: String, release: ReleaseID?, fromHour: Int64, toHour: Int64) throws -> [HourlySessionsRow] {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT hour, sum(sessions) FROM release_hourly_sessions
                WHERE app = $1 AND ($2::text IS NULL OR (version = $2 AND build = $3)) AND hour BETWEEN $4 AND $5
                GROUP BY hour ORDER BY hour
                """, [app, release?.version, release?.build, fromHour, toHour]).map { HourlySessionsRow(hour: $0.integer(0), sessions: $0.int(1)) }
        }
    }
}
