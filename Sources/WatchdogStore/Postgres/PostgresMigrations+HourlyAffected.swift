extension PostgresMigrations {
    /// As the SQLite migration `2026-11-28-hourly-affected` (Migrations+HourlyAffected.swift).
    static let hourlyAffected = """
        ALTER TABLE release_hourly ADD COLUMN affected_sessions bigint NOT NULL DEFAULT 0;
        ALTER TABLE release_hourly_sessions ADD COLUMN affected_sessions bigint NOT NULL DEFAULT 0;
        ALTER TABLE release_hourly_sessions ADD COLUMN attested_sessions bigint NOT NULL DEFAULT 0;
        ALTER TABLE releases ADD COLUMN bulk_start_hour bigint;
        """
}
