import GRDB

extension Migrations {
    /// Issue 44, point 4: Over time plots the share of sessions with a glitch. Per release and
    /// hour, the sessions whose first active report in the release (`release_hourly_sessions`)
    /// or of a kind (`release_hourly`) is dated in that hour; and the hour a release's bulk of
    /// sessions started once it had 50 of them (`bulk_start_hour`, day 0 kept once set); and the
    /// attested session starts per hour (the Require dialog's last 24 hours per release).
    ///
    /// Nothing is backfilled: the hour of a session's first report is not kept in the roll-ups
    /// of before, so a release's affected sessions counted before this migration are in no hour.
    /// The overlay says how many (`affected_sessions_without_hour`) and the dashboard then plots
    /// reports per 1,000 sessions for that pair, whose history is whole.
    static func registerHourlyAffected(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("2026-11-28-hourly-affected") { db in
            try db.execute(sql: """
                ALTER TABLE release_hourly ADD COLUMN affected_sessions INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE release_hourly_sessions ADD COLUMN affected_sessions INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE release_hourly_sessions ADD COLUMN attested_sessions INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE releases ADD COLUMN bulk_start_hour INTEGER;
                """)
        }
    }
}
