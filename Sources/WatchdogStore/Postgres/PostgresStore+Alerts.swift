import PostgresClient

/// Alert hooks, rules, firings and the delivery outbox — the same behaviour as
/// `SQLiteStore+Alerts.swift`. Where SQLite's single writer made a check and the write that
/// follows it one step, these lock the row checked (a hook, a rule) so a node deleting it at
/// the same time is waited for instead of raced. Text is ordered by code point
/// (`COLLATE "C"`), as SQLite orders it, whatever the database's collation.
extension PostgresStore {
    /// Saves a webhook of an app. - Throws: `StoreError.unknownApp`.
    public func createAlertHook(_ hook: AlertHookRecord) throws {
        try auditedConnection { connection in
            // One statement: apps are never deleted, and the foreign key backs the check.
            let inserted = try connection.query("""
                INSERT INTO alert_hooks (id, app, name, url, secret, created_at, created_by, kind, recipients, digest)
                SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::bigint, $7::text, $8::text, $9::text, $10::boolean
                WHERE EXISTS (SELECT 1 FROM apps WHERE id = $2::text)
                """, [hook.id, hook.app, hook.name, hook.url, hook.secret, hook.createdAt, hook.createdBy, hook.kind,
                      hook.recipients.joined(separator: "\n"), hook.digest]).affected
            if inserted == 0 { throw StoreError.unknownApp(hook.app) }
        }
    }

    /// An app's hooks, oldest first (with their secrets: the server never lists those).
    public func alertHooks(app: String) throws -> [AlertHookRecord] {
        try auditedConnection { connection in
            try connection.query("""
                SELECT \(Self.hookColumns) FROM alert_hooks WHERE app = $1 ORDER BY created_at, id COLLATE "C"
                """, [app]).map(Self.alertHook)
        }
    }

    public func alertHook(id: String) throws -> AlertHookRecord? {
        try auditedConnection { connection in
            try connection.query("SELECT \(Self.hookColumns) FROM alert_hooks WHERE id = $1", [id]).first.map(Self.alertHook)
        }
    }

    /// Deletes a hook no rule sends to, with its deliveries.
    public func deleteAlertHook(app: String, id: String) throws -> AlertHookDeletion {
        try auditedTransaction { connection in
            // The lock makes a rule being created for this hook on another node either finish
            // first (and be listed below) or wait and then find the hook gone.
            guard try !connection.query("SELECT 1 FROM alert_hooks WHERE id = $1 AND app = $2 FOR UPDATE", [id, app]).isEmpty else { return .notFound }
            let rules = try connection.query("SELECT id FROM alert_rules WHERE hook_id = $1 ORDER BY id COLLATE \"C\"", [id]).map { $0.text(0) }
            guard rules.isEmpty else { return .inUse(rules) }
            try connection.query("DELETE FROM alert_hooks WHERE id = $1", [id])
            return .deleted
        }
    }

    /// Saves a rule. - Throws: `StoreError.unknownApp` when its hook is not one of the app's.
    public func createAlertRule(_ rule: AlertRuleRecord) throws {
        try auditedTransaction { connection in
            // FOR KEY SHARE: a hook being deleted meanwhile is waited for and then not found.
            guard try !connection.query("SELECT 1 FROM alert_hooks WHERE id = $1 AND app = $2 FOR KEY SHARE", [rule.hookID, rule.app]).isEmpty else {
                throw StoreError.unknownApp(rule.app)
            }
            try connection.query("""
                INSERT INTO alert_rules (id, app, name, condition, kind, minimum_sessions, minimum_affected_sessions, threshold, hook_id, created_at, created_by,
                                         minimum_installs, installs)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
                """, [rule.id, rule.app, rule.name, rule.condition, rule.kind, rule.minimumSessions, rule.minimumAffectedSessions,
                      rule.threshold, rule.hookID, rule.createdAt, rule.createdBy, rule.minimumInstalls, rule.installs])
        }
    }

    /// The rules of an app, or of every app when `app` is nil, oldest first (by app first).
    public func alertRules(app: String?) throws -> [AlertRuleRecord] {
        try auditedConnection { connection in
            try connection.query("""
                SELECT id, app, name, condition, kind, minimum_sessions, minimum_affected_sessions, threshold, hook_id, created_at, created_by, minimum_installs, installs
                FROM alert_rules WHERE $1::text IS NULL OR app = $1::text ORDER BY app COLLATE "C", created_at, id COLLATE "C"
                """, [app]).map { row in
                AlertRuleRecord(id: row.text(0), app: row.text(1), name: row.text(2), condition: row.text(3), kind: row.optionalText(4),
                                minimumSessions: row.int(5), minimumAffectedSessions: row.int(6), threshold: row.optionalDouble(7),
                                hookID: row.text(8), createdAt: row.integer(9), createdBy: row.text(10), minimumInstalls: row.int(11),
                                installs: row.text(12))
            }
        }
    }

    /// Deletes a rule and its firings (`ON DELETE CASCADE`); `false` if the app had no such rule.
    /// In `pool.transaction` so a deadlock with `recordAlerts` on another node (it may hold a
    /// firing the cascade deletes) is retried.
    public func deleteAlertRule(app: String, id: String) throws -> Bool {
        try auditedTransaction { connection in
            try connection.query("DELETE FROM alert_rules WHERE id = $1 AND app = $2", [id, app]).affected == 1
        }
    }

    /// The conditions of an app's rules that fired and have not cleared.
    public func alertFirings(app: String) throws -> [AlertFiringRecord] {
        try auditedConnection { connection in
            try connection.query("""
                SELECT f.rule_id, f.subject, f.release_version, f.release_build, f.alert_id, f.fired_at FROM alert_firings f
                JOIN alert_rules r ON r.id = f.rule_id WHERE r.app = $1 ORDER BY f.fired_at, f.rule_id COLLATE "C", f.subject COLLATE "C"
                """, [app]).map { row in
                AlertFiringRecord(ruleID: row.text(0), subject: row.text(1), release: ReleaseID(version: row.text(2), build: row.text(3)),
                                  alertID: row.text(4), firedAt: row.integer(5))
            }
        }
    }

    /// In one transaction: deletes the cleared firings, stores each alert's firings and — when
    /// at least one of them was not already firing — its delivery. Returns the ids of the
    /// alerts stored.
    public func recordAlerts(_ alerts: [NewAlert], cleared: [AlertFiringRecord]) throws -> [String] {
        guard !alerts.isEmpty || !cleared.isEmpty else { return [] }
        // A deadlock with another node retries the whole closure: nothing is kept across attempts.
        return try auditedTransaction { connection in
            for firing in cleared {
                try connection.query("DELETE FROM alert_firings WHERE rule_id = $1 AND subject = $2", [firing.ruleID, firing.subject])
            }
            var stored: [String] = []
            for alert in alerts {
                var fresh = 0
                for firing in alert.firings {
                    // A rule deleted meanwhile or a subject already firing stores nothing. The
                    // rule is share-locked, so a node deleting it now is waited for and then
                    // the rule is not found (instead of a foreign-key error).
                    fresh += try connection.query("""
                        INSERT INTO alert_firings (rule_id, subject, release_version, release_build, alert_id, fired_at)
                        SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::bigint
                        WHERE EXISTS (SELECT 1 FROM alert_rules WHERE id = $1::text FOR KEY SHARE) ON CONFLICT DO NOTHING
                        """, [firing.ruleID, firing.subject, firing.release.version, firing.release.build, firing.alertID, firing.firedAt]).affected
                }
                guard fresh > 0 || alert.firings.isEmpty else { continue }
                try Self.insert(alert.delivery, connection)
                stored.append(alert.delivery.alertID)
            }
            return stored
        }
    }

    /// The last ISO week whose digest was queued for a hook, if any.
    public func alertDigestWeek(hookID: String) throws -> String? {
        try auditedConnection { connection in
            try connection.query("SELECT week FROM alert_digests WHERE hook_id = $1", [hookID]).first.map { $0.text(0) }
        }
    }

    /// Records the hook's digest week and queues its delivery, unless that week was queued. The
    /// hook's row is locked: two nodes deciding the same week at once queue it once.
    public func queueAlertDigest(_ delivery: AlertDeliveryRecord, week: String) throws -> Bool {
        try auditedTransaction { connection in
            guard try !connection.query("SELECT 1 FROM alert_hooks WHERE id = $1 FOR UPDATE", [delivery.hookID]).isEmpty,
                  try connection.query("SELECT week FROM alert_digests WHERE hook_id = $1", [delivery.hookID]).first?.text(0) != week else { return false }
            try connection.query("""
                INSERT INTO alert_digests (hook_id, week) VALUES ($1, $2) ON CONFLICT (hook_id) DO UPDATE SET week = excluded.week
                """, [delivery.hookID, week])
            _ = try Self.insert(delivery, connection)
            return true
        }
    }

    /// Queues a delivery (a test); its row id.
    public func enqueueAlertDelivery(_ delivery: AlertDeliveryRecord) throws -> Int64 {
        try auditedConnection { connection in try Self.insert(delivery, connection) }
    }

    /// Pending deliveries whose next attempt is due, the earliest first, at most `perHook` of
    /// each hook. Nothing is claimed: every node's workers may pick the same row, so on
    /// several nodes a delivery can be sent more than once (at least once; receivers
    /// deduplicate on `Watchdog-Delivery`), and `recordAlertAttempt` keeps the first end.
    public func dueAlertDeliveries(now: Int64, limit: Int, perHook: Int) throws -> [AlertDeliveryRecord] {
        try auditedConnection { connection in
            try connection.query("""
                SELECT \(Self.deliveryColumns) FROM (
                    SELECT *, row_number() OVER (PARTITION BY hook_id ORDER BY next_attempt_at, id) AS position
                    FROM alert_deliveries WHERE state = 'pending' AND next_attempt_at <= $1) AS due
                WHERE position <= $2 ORDER BY next_attempt_at, id LIMIT $3
                """, [now, perHook, limit]).map(Self.alertDelivery)
        }
    }

    /// Records how an attempt ended (a delivery no longer pending is left as it is).
    public func recordAlertAttempt(deliveryID: Int64, _ attempt: AlertAttempt) throws {
        let state: AlertDeliveryState = attempt.delivered ? .delivered : (attempt.retryAt == nil ? .failed : .pending)
        try auditedConnection { connection in
            _ = try connection.query("""
                UPDATE alert_deliveries SET attempts = attempts + 1, state = $1::text, next_attempt_at = $2::bigint, last_attempt_at = $3::bigint,
                    last_status = $4::bigint, last_latency_ms = $5::bigint, last_error = $6::text, delivered_at = $7::bigint
                WHERE id = $8::bigint AND state = 'pending'
                """, [state.rawValue, state == .pending ? attempt.retryAt : nil, attempt.at, attempt.status, attempt.latencyMilliseconds,
                      attempt.error, attempt.delivered ? attempt.at : nil, deliveryID])
        }
    }

    /// A hook's deliveries, newest first.
    public func alertDeliveries(hookID: String, limit: Int) throws -> [AlertDeliveryRecord] {
        try auditedConnection { connection in
            try connection.query("SELECT \(Self.deliveryColumns) FROM alert_deliveries WHERE hook_id = $1 ORDER BY id DESC LIMIT $2",
                                 [hookID, limit]).map(Self.alertDelivery)
        }
    }

    /// Deletes finished deliveries past the newest `keepPerHook` of each hook.
    public func pruneAlertDeliveries(keepPerHook: Int) throws {
        // In `pool.transaction` so a deadlock with another node pruning at once is retried.
        try auditedTransaction { connection in
            // Finished rows past the newest `keepPerHook` of their hook; pending ones always stay.
            _ = try connection.query("""
                DELETE FROM alert_deliveries WHERE state <> 'pending' AND id IN (
                    SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY hook_id ORDER BY id DESC) AS position FROM alert_deliveries) AS ranked
                    WHERE position > $1)
                """, [keepPerHook])
        }
    }

    /// Inserts a pending delivery; its id.
    @discardableResult
    private static func insert(_ delivery: AlertDeliveryRecord, _ connection: PostgresConnection) throws -> Int64 {
        try connection.query("""
            INSERT INTO alert_deliveries (alert_id, hook_id, app, rule_id, event, body, created_at, state, next_attempt_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8) RETURNING id
            """, [delivery.alertID, delivery.hookID, delivery.app, delivery.ruleID, delivery.event, delivery.body, delivery.createdAt,
                  delivery.nextAttemptAt ?? delivery.createdAt]).first?.integer(0) ?? 0
    }

    private static let hookColumns = "id, app, name, url, secret, created_at, created_by, kind, recipients, digest"

    private static func alertHook(_ row: PostgresRow) -> AlertHookRecord {
        AlertHookRecord(id: row.text(0), app: row.text(1), name: row.text(2), url: row.text(3), secret: row.text(4),
                        createdAt: row.integer(5), createdBy: row.text(6), kind: row.text(7),
                        recipients: row.text(8).split(separator: "\n").map(String.init), digest: row.bool(9))
    }

    private static let deliveryColumns = """
        id, alert_id, hook_id, app, rule_id, event, body, created_at, state, attempts, next_attempt_at, last_attempt_at, last_status, \
        last_latency_ms, last_error, delivered_at
        """

    private static func alertDelivery(_ row: PostgresRow) -> AlertDeliveryRecord {
        AlertDeliveryRecord(id: row.integer(0), alertID: row.text(1), hookID: row.text(2), app: row.text(3), ruleID: row.optionalText(4),
                            event: row.text(5), body: row.text(6), createdAt: row.integer(7),
                            state: AlertDeliveryState(rawValue: row.text(8)) ?? .failed, attempts: row.int(9),
                            nextAttemptAt: row.optionalInteger(10), lastAttemptAt: row.optionalInteger(11), lastStatus: row.optionalInteger(12).map(Int.init),
                            lastLatencyMilliseconds: row.optionalInteger(13).map(Int.init), lastError: row.optionalText(14), deliveredAt: row.optionalInteger(15))
    }
}
