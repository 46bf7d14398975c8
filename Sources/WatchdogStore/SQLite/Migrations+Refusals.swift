import GRDB

extension Migrations {
    /// Issue 44, point 3: refusals per app, kind, code and hour (`RefusalCount`), added to by
    /// each node once a minute, kept 48 hours. Registered last (after `registerApprovals`).
    static func registerRefusals(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("2026-11-28-refusals") { db in
            try db.execute(sql: RefusalSchema.sqlite)
        }
    }
}

/// The `2026-11-28-refusals` schema, the same on both stores (`PostgresMigrations.all`).
enum RefusalSchema {
    static let sqlite = """
        CREATE TABLE refusal_counts (
            app TEXT NOT NULL REFERENCES apps(id),
            kind TEXT NOT NULL CHECK (kind IN ('attestation', 'upload', 'would_refuse')),
            code TEXT NOT NULL,
            hour INTEGER NOT NULL,
            refusals INTEGER NOT NULL,
            PRIMARY KEY (app, kind, code, hour)
        );
        CREATE INDEX refusal_counts_by_hour ON refusal_counts (hour);
        """

    static let postgres = """
        CREATE TABLE refusal_counts (
            app text NOT NULL REFERENCES apps(id),
            kind text NOT NULL CHECK (kind IN ('attestation', 'upload', 'would_refuse')),
            code text NOT NULL,
            hour bigint NOT NULL,
            refusals bigint NOT NULL,
            PRIMARY KEY (app, kind, code, hour)
        );
        CREATE INDEX refusal_counts_by_hour ON refusal_counts (hour);
        """
}
