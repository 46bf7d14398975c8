import GRDB

extension SQLiteStore {
    public func createAlertHook(_ hook: AlertHookRecord) throws {
        try auditedWrite { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM apps WHERE id = ?", arguments: [hook.app]) != nil else { throw StoreError.unknownApp(hook.app) }
            try db.execute(sql: """
                INSERT INTO alert_hooks (id, app, name, url, secret, created_at, created_by, kind, recipients, digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [hook.id, hook.app, hook.name, hook.url, hook.secret, hook.createdAt, hook.createdBy, hook.kind,
                                 hook.recipients.joined(separator: "\n"), hook.digest])
        }
    }

    public func alertHooks(app: String) throws -> [AlertHookRecord] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM alert_hooks WHERE app = ? ORDER BY created_at, id", arguments: [app]).map(Self.alertHook)
        }
    }

    public func alertHook(id: String) throws -> AlertHookRecord? {
        try pool.read { db in try Row.fetchOne(db, sql: "SELECT * FROM alert_hooks WHERE id = ?", arguments: [id]).map(Self.alertHook) }
    }

    public func deleteAlertHook(app: String, id: String) throws -> AlertHookDeletion {
        try auditedWrite { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM alert_hooks WHERE id = ? AND app = ?", arguments: [id, app]) != nil else { return .notFound }
            let rules = try String.fetchAll(db, sql: "SELECT id FROM alert_rules WHERE hook_id = ? ORDER BY id", arguments: [id])
            guard rules.isEmpty else { return .inUse(rules) }
            try db.execute(sql: "DELETE FROM alert_hooks WHERE id = ?", arguments: [id])
            return .deleted
        }
    }

    public func createAlertRule(_ rule: AlertRuleRecord) throws {
        try auditedWrite { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM alert_hooks WHERE id = ? AND app = ?", arguments: [rule.hookID, rule.app]) != nil else {
                throw StoreError.unknownApp(rule.app)
            }
            try db.execute(sql: """
                INSERT INTO alert_rules (id, app, name, condition, kind, minimum_sessions, minimum_affected_sessions, threshold, hook_id, created_at, created_by,
                                         minimum_installs, installs)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [rule.id, rule.app, rule.name, rule.condition, rule.kind, rule.minimumSessions, rule.minimumAffectedSessions,
                                 rule.threshold, rule.hookID, rule.createdAt, rule.createdBy, rule.minimumInstalls, rule.installs])
        }
    }

    public func alertRules(app: String?) throws -> [AlertRuleRecord] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM alert_rules WHERE ?1 IS NULL OR app = ?1 ORDER BY app, created_at, id", arguments: [app]).map { row in
                AlertRuleRecord(id: row["id"], app: row["app"], name: row["name"], condition: row["condition"], kind: row["kind"],
                                minimumSessions: row["minimum_sessions"], minimumAffectedSessions: row["minimum_affected_sessions"],
                                threshold: row["threshold"], hookID: row["hook_id"], createdAt: row["created_at"], createdBy: row["created_by"],
                                minimumInstalls: row["minimum_installs"], installs: row["installs"])
            }
        }
    }

    public func deleteAlertRule(app: String, id: String) throws -> Bool {
        try auditedWrite { db in
            try db.execute(sql: "DELETE FROM alert_rules WHERE id = ? AND app = ?", arguments: [id, app])
            return db.changesCount == 1
        }
    }

    public func alertFirings(app: String) throws -> [AlertFiringRecord] {
        try pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT f.rule_id, f.subject, f.release_version, f.release_build, f.alert_id, f.fired_at FROM alert_firings f
                JOIN alert_rules r ON r.id = f.rule_id WHERE r.app = ? ORDER BY f.fired_at, f.rule_id, f.subject
                """, arguments: [app]).map { row in
                AlertFiringRecord(ruleID: row[0], subject: row[1], release: ReleaseID(version: row[2], build: row[3]), alertID: row[4], firedAt: row[5])
            }
        }
    }

    public func recordAlerts(_ alerts: [NewAlert], cleared: [AlertFiringRecord]) throws -> [String] {
        guard !alerts.isEmpty || !cleared.isEmpty else { return [] }
        return try auditedWrite { db in
            for firing in cleared {
                try db.execute(sql: "DELETE FROM alert_firings WHERE rule_id = ? AND subject = ?", arguments: [firing.ruleID, firing.subject])
            }
            var stored: [String] = []
            for alert in alerts {
                var fresh = 0
                for firing in alert.firings {
                    // A rule deleted meanwhile (foreign key) or a subject already firing stores nothing.
                    try db.execute(sql: """
                        INSERT INTO alert_firings (rule_id, subject, release_version, release_build, alert_id, fired_at)
                        SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM alert_rules WHERE id = ?) ON CONFLICT DO NOTHING
                        """, arguments: [firing.ruleID, firing.subject, firing.release.version, firing.release.build, firing.alertID, firing.firedAt, firing.ruleID])
                    fresh += db.changesCount
                }
                guard fresh > 0 || alert.firings.isEmpty else { continue }
                try Self.insert(alert.delivery, db)
                stored.append(alert.delivery.alertID)
            }
            return stored
        }
    }

    public func alertDigestWeek(hookID: String) throws -> String? {
        try pool.read { db in try String.fetchOne(db, sql: "SELECT week FROM alert_digests WHERE hook_id = ?", arguments: [hookID]) }
    }

    public func queueAlertDigest(_ delivery: AlertDeliveryRecord, week: String) throws -> Bool {
        try auditedWrite { db in
            guard try String.fetchOne(db, sql: "SELECT week FROM alert_digests WHERE hook_id = ?", arguments: [delivery.hookID]) != week,
                  try Bool.fetchOne(db, sql: "SELECT 1 FROM alert_hooks WHERE id = ?", arguments: [delivery.hookID]) != nil else { return false }
            try db.execute(sql: "INSERT INTO alert_digests (hook_id, week) VALUES (?, ?) ON CONFLICT (hook_id) DO UPDATE SET week = excluded.week",
                           arguments: [delivery.hookID, week])
            try Self.insert(delivery, db)
            return true
        }
    }

    public func enqueueAlertDelivery(_ delivery: AlertDeliveryRecord) throws -> Int64 {
        try auditedWrite { db in
            try Self.insert(delivery, db)
            return db.lastInsertedRowID
        }
    }

    public func dueAlertDeliveries(now: Int64, limit: Int, perHook: Int) throws -> [AlertDeliveryRecord] {
        try pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY hook_id ORDER BY next_attempt_at, id) AS position
                               FROM alert_deliveries WHERE state = 'pending' AND next_attempt_at <= ?)
                WHERE position <= ? ORDER BY next_attempt_at, id LIMIT ?
                """, arguments: [now, perHook, limit]).map(Self.alertDelivery)
        }
    }

    public func recordAlertAttempt(deliveryID: Int64, _ attempt: AlertAttempt) throws {
        let state: AlertDeliveryState = attempt.delivered ? .delivered : (attempt.retryAt == nil ? .failed : .pending)
        try auditedWrite { db in
            try db.execute(sql: """
                UPDATE alert_deliveries SET attempts = attempts + 1, state = ?, next_attempt_at = ?, last_attempt_at = ?, last_status = ?,
                    last_latency_ms = ?, last_error = ?, delivered_at = ? WHERE id = ? AND state = 'pending'
                """, arguments: [state.rawValue, state == .pending ? attempt.retryAt : nil, attempt.at, attempt.status, attempt.latencyMilliseconds,
                                 attempt.error, attempt.delivered ? attempt.at : nil, deliveryID])
        }
    }

    public func alertDeliveries(hookID: String, limit: Int) throws -> [AlertDeliveryRecord] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM alert_deliveries WHERE hook_id = ? ORDER BY id DESC LIMIT ?", arguments: [hookID, limit]).map(Self.alertDelivery)
        }
    }

    public func pruneAlertDeliveries(keepPerHook: Int) throws {
        try auditedWrite { db in
            // Finished rows past the newest `keepPerHook` of their hook; pending ones always stay.
            try db.execute(sql: """
                DELETE FROM alert_deliveries WHERE state != 'pending' AND id IN (
                    SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY hook_id ORDER BY id DESC) AS position FROM alert_deliveries)
                    WHERE position > ?)
                """, arguments: [keepPerHook])
        }
    }

    private static func insert(_ delivery: AlertDeliveryRecord, _ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO alert_deliveries (alert_id, hook_id, app, rule_id, event, body, created_at, state, next_attempt_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?)
            """, arguments: [delivery.alertID, delivery.hookID, delivery.app, delivery.ruleID, delivery.event, delivery.body, delivery.createdAt,
                             delivery.nextAttemptAt ?? delivery.createdAt])
    }

    private static func alertHook(_ row: Row) -> AlertHookRecord {
        AlertHookRecord(id: row["id"], app: row["app"], name: row["name"], url: row["url"], secret: row["secret"],
                        createdAt: row["created_at"], createdBy: row["created_by"], kind: row["kind"],
                        recipients: (row["recipients"] as String).split(separator: "\n").map(String.init), digest: row["digest"])
    }

    private static func alertDelivery(_ row: Row) -> AlertDeliveryRecord {
        AlertDeliveryRecord(id: row["id"], alertID: row["alert_id"], hookID: row["hook_id"], app: row["app"], ruleID: row["rule_id"],
                            event: row["event"], body: row["body"], createdAt: row["created_at"],
                            state: AlertDeliveryState(rawValue: row["state"]) ?? .failed, attempts: row["attempts"],
                            nextAttemptAt: row["next_attempt_at"], lastAttemptAt: row["last_attempt_at"], lastStatus: row["last_status"],
                            lastLatencyMilliseconds: row["last_latency_ms"], lastError: row["last_error"], deliveredAt: row["delivered_at"])
    }
}
