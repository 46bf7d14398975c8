import PostgresClient

/// `SQLiteSessionLimiter`'s rules, set-based: the hourly counts are upserts that add a
/// transaction's starts at once and return the total, from which each start's place in its hour
/// follows (the k-th of n added after a total of t was the (t − n + k)-th). Rows are touched in
/// key order, as every other upsert of the ingest transaction, so nodes do not deadlock.
struct PostgresSessionLimiter {
    struct Start {
        var session: SessionRecord
        var receivedAt: Int64
    }

    private struct OriginKey: Hashable, Comparable {
        var app: String, install: String
        static func < (a: Self, b: Self) -> Bool { (a.app, a.install) < (b.app, b.install) }
    }

    private struct CountKey: Hashable, Comparable {
        var app: String, scope: Int64, key: String, hour: Int64
        static func < (a: Self, b: Self) -> Bool { (a.app, a.scope, a.key, a.hour) < (b.app, b.scope, b.key, b.hour) }
    }

    /// The marks of each start (same order), the new ones' rows already updated.
    func marks(of starts: [Start], _ connection: PostgresConnection) throws -> [SessionMarks] {
        var marks = starts.map(\.session.marks)
        guard !starts.isEmpty else { return marks }
        // 1. Which installs the app has seen, and which of them came past a network's limit.
        var origins: [OriginKey: Bool] = [:]
        var lastReceived: [OriginKey: Int64] = [:]
        let asked = Set(starts.compactMap { start in start.session.installID.map { OriginKey(app: start.session.app, install: $0) } }).sorted()
        if !asked.isEmpty {
            for row in try connection.query("""
                SELECT o.app, o.install_id, o.implausible, o.last_received_at FROM install_origins o
                JOIN unnest($1::text[], $2::text[]) AS k(app, install_id) USING (app, install_id)
                """, [PostgresArray.text(asked.map(\.app)), PostgresArray.text(asked.map(\.install))]) {
                origins[OriginKey(app: row.text(0), install: row.text(1))] = row.bool(2)
                lastReceived[OriginKey(app: row.text(0), install: row.text(1))] = row.integer(3)
            }
        }
        // An install seen again keeps its origin past retention's window (at most one write an
        // hour): retention deletes only the origins of installs gone quiet for the window.
        var seen: [OriginKey: Int64] = [:]
        for start in starts {
            guard let install = start.session.installID else { continue }
            let key = OriginKey(app: start.session.app, install: install)
            if let last = lastReceived[key], last < start.receivedAt - 3_600_000 { seen[key] = max(seen[key] ?? 0, start.receivedAt) }
        }
        if !seen.isEmpty {
            let keys = seen.keys.sorted()
            try connection.query("""
                UPDATE install_origins o SET last_received_at = u.at FROM unnest($1::text[], $2::text[], $3::bigint[]) AS u(app, install_id, at)
                WHERE o.app = u.app AND o.install_id = u.install_id
                """, [PostgresArray.text(keys.map(\.app)), PostgresArray.text(keys.map(\.install)), PostgresArray.integer(keys.map { seen[$0]! })])
        }
        // 2. New installs per network and hour, in request order.
        var newInstalls: [(index: Int, key: OriginKey, count: CountKey?)] = []
        for (index, start) in starts.enumerated() {
            guard let install = start.session.installID else { continue }
            let key = OriginKey(app: start.session.app, install: install)
            if let implausible = origins[key] {
                if implausible { marks[index].insert(.networkNewInstalls) }
                continue
            }
            origins[key] = false
            let limited = start.session.policy.limits.newInstallsPerNetworkPerHour > 0 && start.session.network != nil
            newInstalls.append((index, key, limited ? CountKey(app: key.app, scope: 1, key: start.session.network!, hour: Self.hour(start.receivedAt)) : nil))
        }
        let networkPlaces = try places(newInstalls.map(\.count), connection)
        for (position, entry) in newInstalls.enumerated() {
            if let place = networkPlaces[position], place > starts[entry.index].session.policy.limits.newInstallsPerNetworkPerHour {
                marks[entry.index].insert(.networkNewInstalls)
                origins[entry.key] = true
            }
        }
        if !newInstalls.isEmpty {
            let rows = newInstalls.sorted { $0.key < $1.key }
            try connection.query("""
                INSERT INTO install_origins (app, install_id, network, first_received_at, implausible, last_received_at)
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::boolean[], $4::bigint[]) ON CONFLICT DO NOTHING
                """, [PostgresArray.text(rows.map(\.key.app)), PostgresArray.text(rows.map(\.key.install)),
                      PostgresArray.text(rows.map { starts[$0.index].session.network }), PostgresArray.integer(rows.map { starts[$0.index].receivedAt }),
                      PostgresArray.bool(rows.map { origins[$0.key] ?? false })])
        }
        // 3. Session starts per install (or, without one, per network) and hour.
        let installKeys: [CountKey?] = starts.map { start in
            guard start.session.policy.limits.sessionsPerInstallPerHour > 0 else { return nil }
            return CountKey(app: start.session.app, scope: 0, key: start.session.installID ?? "network " + (start.session.network ?? ""), hour: Self.hour(start.receivedAt))
        }
        let installPlaces = try places(installKeys, connection)
        for index in starts.indices {
            if let place = installPlaces[index], place > starts[index].session.policy.limits.sessionsPerInstallPerHour { marks[index].insert(.installRate) }
        }
        let marked = starts.indices.filter { !marks[$0].isEmpty }.sorted { starts[$0].session.id < starts[$1].session.id }
        if !marked.isEmpty {
            try connection.query("""
                UPDATE sessions s SET implausible = u.marks FROM unnest($1::text[], $2::bigint[]) AS u(id, marks) WHERE s.id = u.id
                """, [PostgresArray.text(marked.map { starts[$0].session.id }), PostgresArray.integer(marked.map { Int64(marks[$0].rawValue) })])
        }
        return marks
    }

    /// Adds each key's occurrences to its hourly count; each occurrence's place (1-based) in it.
    private func places(_ keys: [CountKey?], _ connection: PostgresConnection) throws -> [Int?] {
        var added: [CountKey: Int] = [:]
        for key in keys.compactMap({ $0 }) { added[key, default: 0] += 1 }
        guard !added.isEmpty else { return keys.map { _ in nil } }
        let sorted = added.keys.sorted()
        var totals: [CountKey: Int] = [:]
        for row in try connection.query("""
            INSERT INTO ingest_hourly_counts AS c (app, scope, key, hour, count)
            SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::bigint[])
            ON CONFLICT (app, scope, key, hour) DO UPDATE SET count = c.count + excluded.count
            RETURNING app, scope, key, hour, count
            """, [PostgresArray.text(sorted.map(\.app)), PostgresArray.integer(sorted.map(\.scope)), PostgresArray.text(sorted.map(\.key)),
                  PostgresArray.integer(sorted.map(\.hour)), PostgresArray.integer(sorted.map { Int64(added[$0]!) })]) {
            totals[CountKey(app: row.text(0), scope: row.integer(1), key: row.text(2), hour: row.integer(3))] = row.int(4)
        }
        var seen: [CountKey: Int] = [:]
        return keys.map { key in
            guard let key, let total = totals[key] else { return nil }
            seen[key, default: 0] += 1
            return total - added[key]! + seen[key]!
        }
    }

    static func hour(_ milliseconds: Int64) -> Int64 { Rollup.hour(milliseconds) }
}
