import GRDB

/// The schema, as ordered, named migrations recorded by GRDB in `grdb_migrations`.
/// A migration that has shipped is never edited: a change is a new migration.
enum Migrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("2026-11-21-core") { db in
            try db.execute(sql: """
                CREATE TABLE apps (
                    id TEXT PRIMARY KEY,
                    created_at INTEGER NOT NULL
                );
                CREATE TABLE credentials (
                    id TEXT PRIMARY KEY,
                    role TEXT NOT NULL CHECK (role IN ('ingest', 'viewer', 'admin')),
                    app TEXT REFERENCES apps(id),
                    name TEXT NOT NULL,
                    secret_hash BLOB NOT NULL UNIQUE,
                    created_at INTEGER NOT NULL,
                    revoked_at INTEGER
                );
                CREATE TABLE reports (
                    id TEXT PRIMARY KEY,
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    channel TEXT,
                    kind TEXT NOT NULL,
                    occurred_at INTEGER NOT NULL,
                    received_at INTEGER NOT NULL,
                    session_id TEXT,
                    install_id TEXT,
                    suspect INTEGER NOT NULL,
                    screen TEXT,
                    fingerprint TEXT NOT NULL,
                    body TEXT NOT NULL
                );
                -- Drill-down walks these newest first by rowid (every index ends with it).
                CREATE INDEX reports_by_release ON reports (app, version, build);
                CREATE INDEX reports_by_release_kind ON reports (app, version, build, kind);
                CREATE INDEX reports_by_fingerprint ON reports (app, fingerprint);
                CREATE TABLE sessions (
                    id TEXT PRIMARY KEY,
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    channel TEXT,
                    install_id TEXT,
                    started_at INTEGER NOT NULL,
                    received_at INTEGER NOT NULL,
                    body TEXT NOT NULL
                );
                CREATE INDEX sessions_by_release ON sessions (app, version, build, started_at);
                -- Session starts per device idiom: the denominator of the per-idiom rates.
                CREATE TABLE release_idiom_sessions (
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    idiom TEXT NOT NULL,
                    sessions INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (app, version, build, idiom)
                ) WITHOUT ROWID;
                -- Roll-ups, written in the same transaction as the rows they count.
                CREATE TABLE releases (
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    sessions INTEGER NOT NULL DEFAULT 0,
                    affected_sessions INTEGER NOT NULL DEFAULT 0,
                    auto_fixed INTEGER NOT NULL DEFAULT 0,
                    test_crashes INTEGER NOT NULL DEFAULT 0,
                    first_seen INTEGER NOT NULL,
                    last_seen INTEGER NOT NULL,
                    PRIMARY KEY (app, version, build)
                ) WITHOUT ROWID;
                CREATE TABLE release_kinds (
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    reports INTEGER NOT NULL DEFAULT 0,
                    suspect_reports INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (app, version, build, kind)
                ) WITHOUT ROWID;
                -- Reports per release broken down by screen, keyboard mode and device idiom.
                CREATE TABLE release_breakdown (
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    dimension TEXT NOT NULL,
                    value TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    reports INTEGER NOT NULL DEFAULT 0,
                    suspect_reports INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (app, version, build, dimension, value, kind)
                ) WITHOUT ROWID;
                -- Reports per release, kind and hour (UTC, of occurred_at).
                CREATE TABLE release_hourly (
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    hour INTEGER NOT NULL,
                    reports INTEGER NOT NULL DEFAULT 0,
                    suspect_reports INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (app, version, build, kind, hour)
                ) WITHOUT ROWID;
                -- Issues: reports grouped by fingerprint (kind + screen + view + keyboard mode), per release.
                CREATE TABLE issue_releases (
                    app TEXT NOT NULL,
                    fingerprint TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    screen TEXT,
                    view_name TEXT,
                    keyboard_mode TEXT,
                    reports INTEGER NOT NULL DEFAULT 0,
                    suspect_reports INTEGER NOT NULL DEFAULT 0,
                    affected_sessions INTEGER NOT NULL DEFAULT 0,
                    first_seen INTEGER NOT NULL,
                    last_seen INTEGER NOT NULL,
                    PRIMARY KEY (app, version, build, fingerprint)
                ) WITHOUT ROWID;
                CREATE INDEX issue_releases_by_fingerprint ON issue_releases (app, fingerprint);
                CREATE TABLE issue_sessions (
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    fingerprint TEXT NOT NULL,
                    session_id TEXT NOT NULL,
                    PRIMARY KEY (app, version, build, fingerprint, session_id)
                ) WITHOUT ROWID;
                -- Keyboard heights seen (active reports), as a histogram per whole point.
                CREATE TABLE keyboard_heights (
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    model TEXT NOT NULL,
                    mode TEXT NOT NULL,
                    input_mode TEXT NOT NULL,
                    height INTEGER NOT NULL,
                    reports INTEGER NOT NULL DEFAULT 0,
                    -- of which the height was ≥ 90 % of the window's: the zero-frame bug.
                    window_sized INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (app, version, build, model, mode, input_mode, height)
                ) WITHOUT ROWID;
                -- Which sessions of a release already have an (active) report: affected sessions.
                CREATE TABLE release_affected_sessions (
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    session_id TEXT NOT NULL,
                    PRIMARY KEY (app, version, build, session_id)
                ) WITHOUT ROWID;
                -- Remote config: the current document per app, and every change.
                CREATE TABLE config_documents (
                    app TEXT PRIMARY KEY REFERENCES apps(id),
                    version INTEGER NOT NULL,
                    document TEXT NOT NULL,
                    updated_at INTEGER NOT NULL,
                    updated_by TEXT NOT NULL
                );
                CREATE TABLE config_changes (
                    app TEXT NOT NULL REFERENCES apps(id),
                    version INTEGER NOT NULL,
                    changed_at INTEGER NOT NULL,
                    changed_by TEXT NOT NULL,
                    before TEXT,
                    after TEXT NOT NULL,
                    PRIMARY KEY (app, version)
                );
                """)
        }
        migrator.registerMigration("2026-11-21-config-rules") { db in
            try db.execute(sql: """
                -- The idiom of a session start: config rules match on it (dry-run impact).
                ALTER TABLE sessions ADD COLUMN idiom TEXT;
                UPDATE sessions SET idiom = json_extract(body, '$.device.idiom') WHERE json_valid(body);
                -- Recent installs per app (config dry-runs count whom a change would switch).
                CREATE INDEX sessions_by_start ON sessions (app, started_at);
                -- Test crashes per install and UTC day of arrival: test_crash_budget.
                CREATE TABLE test_crash_daily (
                    app TEXT NOT NULL,
                    install_id TEXT NOT NULL,
                    day INTEGER NOT NULL,
                    crashes INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (app, day, install_id)
                ) WITHOUT ROWID;
                INSERT INTO test_crash_daily (app, install_id, day, crashes)
                    SELECT app, install_id, received_at / 86400000, count(*) FROM reports
                    WHERE install_id IS NOT NULL AND json_extract(body, '$.action.test_crash') = 1
                    GROUP BY app, install_id, received_at / 86400000;
                """)
        }
        migrator.registerMigration("2026-11-21-dashboard") { db in
            try db.execute(sql: """
                -- Browser sessions of the dashboard: only the hash of the cookie is stored.
                CREATE TABLE dashboard_sessions (
                    id_hash BLOB PRIMARY KEY,
                    credential_id TEXT NOT NULL REFERENCES credentials(id),
                    csrf_token TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL
                );
                -- One-time sign-in links (serve --demo prints one), hashed, used at most once.
                CREATE TABLE login_links (
                    code_hash BLOB PRIMARY KEY,
                    credential_id TEXT NOT NULL REFERENCES credentials(id),
                    expires_at INTEGER NOT NULL
                );
                """)
        }
        migrator.registerMigration("2026-11-23-robust-verdicts") { db in
            try db.execute(sql: """
                -- Reports past the per-session, per-fingerprint cap: stored, counted apart.
                ALTER TABLE reports ADD COLUMN flooded INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE release_kinds ADD COLUMN flooded_reports INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE release_breakdown ADD COLUMN flooded_reports INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE release_hourly ADD COLUMN flooded_reports INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE issue_releases ADD COLUMN flooded_reports INTEGER NOT NULL DEFAULT 0;
                -- Active reports per session and fingerprint: what the flood cap counts.
                ALTER TABLE issue_sessions ADD COLUMN reports INTEGER NOT NULL DEFAULT 1;
                INSERT INTO issue_sessions (app, version, build, fingerprint, session_id, reports)
                    SELECT app, version, build, fingerprint, session_id, count(*) FROM reports
                    WHERE suspect = 0 AND session_id IS NOT NULL GROUP BY app, version, build, fingerprint, session_id
                    ON CONFLICT DO UPDATE SET reports = excluded.reports;
                -- Sessions with an active report, per value of a dimension (kind, screen,
                -- keyboard_mode, idiom): the numerators of the affected-session comparison.
                CREATE TABLE affected_session_values (
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    dimension TEXT NOT NULL,
                    value TEXT NOT NULL,
                    session_id TEXT NOT NULL,
                    PRIMARY KEY (app, version, build, dimension, value, session_id)
                ) WITHOUT ROWID;
                CREATE TABLE release_affected (
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    dimension TEXT NOT NULL,
                    value TEXT NOT NULL,
                    affected_sessions INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (app, version, build, dimension, value)
                ) WITHOUT ROWID;
                -- Per install and release: config cohorts (a rule's salted hash of install_id)
                -- and how concentrated the reports are.
                CREATE TABLE release_installs (
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    install_id TEXT NOT NULL,
                    channel TEXT,
                    idiom TEXT,
                    sessions INTEGER NOT NULL DEFAULT 0,
                    -- active reports, flooded ones included
                    reports INTEGER NOT NULL DEFAULT 0,
                    affected_sessions INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (app, version, build, install_id)
                ) WITHOUT ROWID;
                CREATE TABLE release_install_kinds (
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    install_id TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    -- active reports under the flood cap
                    reports INTEGER NOT NULL DEFAULT 0,
                    affected_sessions INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (app, version, build, install_id, kind)
                ) WITHOUT ROWID;
                -- Session starts per release and hour (UTC): the denominators of rates over time.
                CREATE TABLE release_hourly_sessions (
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    hour INTEGER NOT NULL,
                    sessions INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (app, version, build, hour)
                ) WITHOUT ROWID;
                -- Existing data dirs: the new roll-ups from the raw rows still kept.
                INSERT OR IGNORE INTO affected_session_values
                    SELECT app, version, build, 'kind', kind, session_id FROM reports WHERE suspect = 0 AND session_id IS NOT NULL;
                INSERT OR IGNORE INTO affected_session_values
                    SELECT app, version, build, 'screen', coalesce(screen, ''), session_id FROM reports WHERE suspect = 0 AND session_id IS NOT NULL;
                INSERT OR IGNORE INTO affected_session_values
                    SELECT app, version, build, 'keyboard_mode', coalesce(json_extract(body, '$.keyboard.mode'), ''), session_id
                    FROM reports WHERE suspect = 0 AND session_id IS NOT NULL AND json_valid(body);
                INSERT INTO release_affected (app, version, build, dimension, value, affected_sessions)
                    SELECT app, version, build, dimension, value, count(*) FROM affected_session_values
                    GROUP BY app, version, build, dimension, value;
                -- A session runs on one device: its idiom is that of its first active report.
                INSERT INTO release_affected (app, version, build, dimension, value, affected_sessions)
                    SELECT app, version, build, 'idiom', idiom, count(*) FROM (
                        SELECT app, version, build, session_id, coalesce(json_extract(body, '$.device.idiom'), '') AS idiom, min(rowid)
                        FROM reports WHERE suspect = 0 AND session_id IS NOT NULL AND json_valid(body)
                        GROUP BY app, version, build, session_id)
                    GROUP BY app, version, build, idiom;
                INSERT INTO release_installs (app, version, build, install_id, channel, idiom, sessions)
                    SELECT app, version, build, install_id, max(channel), max(idiom), count(*) FROM sessions
                    WHERE install_id IS NOT NULL GROUP BY app, version, build, install_id;
                INSERT INTO release_installs (app, version, build, install_id, reports, affected_sessions)
                    SELECT app, version, build, install_id, count(*), count(DISTINCT session_id) FROM reports
                    WHERE suspect = 0 AND install_id IS NOT NULL GROUP BY app, version, build, install_id
                    ON CONFLICT DO UPDATE SET reports = excluded.reports, affected_sessions = excluded.affected_sessions;
                INSERT INTO release_install_kinds (app, version, build, install_id, kind, reports, affected_sessions)
                    SELECT app, version, build, install_id, kind, count(*), count(DISTINCT session_id) FROM reports
                    WHERE suspect = 0 AND install_id IS NOT NULL GROUP BY app, version, build, install_id, kind;
                INSERT INTO release_hourly_sessions (app, version, build, hour, sessions)
                    SELECT app, version, build,
                           CASE WHEN started_at >= 0 THEN started_at / 3600000 ELSE (started_at - 3599999) / 3600000 END AS hour, count(*)
                    FROM sessions GROUP BY app, version, build, hour;
                -- Releases whose raw rows retention had partly deleted: the tables above undercount
                -- them (their roll-ups of before stay whole), so their breakdowns are not compared.
                ALTER TABLE releases ADD COLUMN partial_history INTEGER NOT NULL DEFAULT 0;
                UPDATE releases SET partial_history = 1
                    WHERE sessions > (SELECT count(*) FROM sessions s WHERE s.app = releases.app AND s.version = releases.version AND s.build = releases.build)
                       OR (SELECT total(reports + suspect_reports) FROM release_kinds k
                           WHERE k.app = releases.app AND k.version = releases.version AND k.build = releases.build)
                          > (SELECT count(*) FROM reports r WHERE r.app = releases.app AND r.version = releases.version AND r.build = releases.build);
                """)
        }
        migrator.registerMigration("2026-11-23-client-drops") { db in
            try db.execute(sql: """
                -- Items clients evicted from a full outbox or quarantined (client_dropped of a
                -- reports batch), one row per batch that carried them; an id counts once.
                CREATE TABLE client_drops (
                    id TEXT UNIQUE,
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    evicted INTEGER NOT NULL,
                    quarantined INTEGER NOT NULL,
                    received_at INTEGER NOT NULL
                );
                CREATE INDEX client_drops_by_release ON client_drops (app, version, build);
                """)
        }
        migrator.registerMigration("2026-11-23-report-ids-per-app") { db in
            // A report id is unique within its app, not across apps: another app's id must be
            // neither a duplicate (an existence oracle) nor able to pre-empt a report. SQLite
            // cannot change a primary key, so the table is rebuilt; rowids are kept, because
            // drill-down cursors and arrival order are rowids.
            let columns = "id, app, version, build, channel, kind, occurred_at, received_at, session_id, install_id, suspect, screen, fingerprint, body, flooded"
            try db.execute(sql: """
                CREATE TABLE reports_per_app (
                    id TEXT NOT NULL,
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    channel TEXT,
                    kind TEXT NOT NULL,
                    occurred_at INTEGER NOT NULL,
                    received_at INTEGER NOT NULL,
                    session_id TEXT,
                    install_id TEXT,
                    suspect INTEGER NOT NULL,
                    screen TEXT,
                    fingerprint TEXT NOT NULL,
                    body TEXT NOT NULL,
                    flooded INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (app, id)
                );
                INSERT INTO reports_per_app (rowid, \(columns)) SELECT rowid, \(columns) FROM reports ORDER BY rowid;
                DROP TABLE reports;
                ALTER TABLE reports_per_app RENAME TO reports;
                CREATE INDEX reports_by_release ON reports (app, version, build);
                CREATE INDEX reports_by_release_kind ON reports (app, version, build, kind);
                CREATE INDEX reports_by_fingerprint ON reports (app, fingerprint);
                """)
        }
        registerCompactStorage(&migrator)
        registerAlerts(&migrator)
        registerAdmission(&migrator)
        registerRollouts(&migrator)
        registerAttestation(&migrator)
        registerAlertInstalls(&migrator)
        registerMarkValues(&migrator)
        registerNumberedReports(&migrator)
        registerOneNetwork(&migrator)
        registerLastReceived(&migrator)
        registerAppRoles(&migrator)
        registerAuditLog(&migrator)
        registerNotify(&migrator)
        registerTriage(&migrator)
        registerApprovals(&migrator)
        registerRefusals(&migrator)
        registerHourlyAffected(&migrator)
        return migrator
    }
}
