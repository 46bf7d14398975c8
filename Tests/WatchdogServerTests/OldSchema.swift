import Foundation
import GRDB
@testable import WatchdogStore

/// Takes a data dir back to the schema before a migration, with the same data, so a test can
/// check that the migration brings an existing data dir to what fresh ingest gives.
enum OldSchema {
    /// Undoes `2026-11-23-compact-storage`: text ids and bodies, `session_id` and `install_id`
    /// on reports (from the body), and the three session tables keyed by app, version and build.
    static func undoCompactStorage(_ db: Database) throws {
        try undoMarkValues(db)
        try undoAdmission(db)
        db.add(function: DatabaseFunction("test_inflate", argumentCount: 1, pure: true) { values in
            try StoredBody.text(from: values[0])
        })
        let id = { (column: String) in
            """
            CASE WHEN typeof(\(column)) = 'blob' AND length(\(column)) = 16 THEN lower(substr(hex(\(column)), 1, 8) || '-' || \
            substr(hex(\(column)), 9, 4) || '-' || substr(hex(\(column)), 13, 4) || '-' || substr(hex(\(column)), 17, 4) || '-' || \
            substr(hex(\(column)), 21, 12)) ELSE \(column) END
            """
        }
        try db.execute(sql: """
            DROP VIEW report_ids;
            CREATE TABLE old_reports (
                id TEXT NOT NULL, app TEXT NOT NULL, version TEXT NOT NULL, build TEXT NOT NULL, channel TEXT, kind TEXT NOT NULL,
                occurred_at INTEGER NOT NULL, received_at INTEGER NOT NULL, session_id TEXT, install_id TEXT, suspect INTEGER NOT NULL,
                screen TEXT, fingerprint TEXT NOT NULL, body TEXT NOT NULL, flooded INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (app, id));
            INSERT INTO old_reports (rowid, id, app, version, build, channel, kind, occurred_at, received_at, session_id, install_id,
                                     suspect, screen, fingerprint, body, flooded)
                SELECT rowid, \(id("id")), app, version, build, channel, kind, occurred_at, received_at,
                       json_extract(test_inflate(body), '$.session_id'), json_extract(test_inflate(body), '$.install_id'),
                       suspect, screen, fingerprint, test_inflate(body), flooded
                FROM reports ORDER BY rowid;
            DROP TABLE reports;
            ALTER TABLE old_reports RENAME TO reports;
            CREATE INDEX reports_by_release ON reports (app, version, build);
            CREATE INDEX reports_by_release_kind ON reports (app, version, build, kind);
            CREATE INDEX reports_by_fingerprint ON reports (app, fingerprint);

            CREATE TABLE old_sessions (id TEXT PRIMARY KEY, app TEXT NOT NULL, version TEXT NOT NULL, build TEXT NOT NULL, channel TEXT,
                install_id TEXT, started_at INTEGER NOT NULL, received_at INTEGER NOT NULL, body TEXT NOT NULL, idiom TEXT);
            INSERT INTO old_sessions (rowid, id, app, version, build, channel, install_id, started_at, received_at, body, idiom)
                SELECT rowid, \(id("id")), app, version, build, channel, install_id, started_at, received_at, test_inflate(body), idiom
                FROM sessions ORDER BY rowid;
            DROP TABLE sessions;
            ALTER TABLE old_sessions RENAME TO sessions;
            CREATE INDEX sessions_by_release ON sessions (app, version, build, started_at);
            CREATE INDEX sessions_by_start ON sessions (app, started_at);

            CREATE TABLE issue_sessions (app TEXT NOT NULL, version TEXT NOT NULL, build TEXT NOT NULL, fingerprint TEXT NOT NULL,
                session_id TEXT NOT NULL, reports INTEGER NOT NULL DEFAULT 1, PRIMARY KEY (app, version, build, fingerprint, session_id)) WITHOUT ROWID;
            INSERT INTO issue_sessions SELECT r.app, r.version, r.build, printf('fp_%016llx', m.fingerprint), \(id("m.session")), m.reports
                FROM session_issue_marks m JOIN release_refs r ON r.ref = m.release;
            CREATE TABLE release_affected_sessions (app TEXT NOT NULL, version TEXT NOT NULL, build TEXT NOT NULL, session_id TEXT NOT NULL,
                PRIMARY KEY (app, version, build, session_id)) WITHOUT ROWID;
            INSERT INTO release_affected_sessions SELECT r.app, r.version, r.build, \(id("m.session"))
                FROM session_affected_marks m JOIN release_refs r ON r.ref = m.release;
            CREATE TABLE affected_session_values (app TEXT NOT NULL, version TEXT NOT NULL, build TEXT NOT NULL, dimension TEXT NOT NULL,
                value TEXT NOT NULL, session_id TEXT NOT NULL, PRIMARY KEY (app, version, build, dimension, value, session_id)) WITHOUT ROWID;
            INSERT INTO affected_session_values SELECT r.app, r.version, r.build,
                CASE m.dimension WHEN 0 THEN 'kind' WHEN 1 THEN 'screen' ELSE 'keyboard_mode' END, m.value, \(id("m.session"))
                FROM session_value_marks m JOIN release_refs r ON r.ref = m.release;
            DROP TABLE session_issue_marks;
            DROP TABLE session_affected_marks;
            DROP TABLE session_value_marks;
            DROP TABLE release_refs;
            DELETE FROM grdb_migrations WHERE identifier = '2026-11-23-compact-storage';
            """)
    }

    /// Undoes `2026-11-26-mark-values`: each value mark holds its value's text again, and
    /// `mark_values` is gone.
    static func undoMarkValues(_ db: Database) throws {
        try undoNumberedReports(db)
        try db.execute(sql: """
            CREATE TABLE text_value_marks (release INTEGER NOT NULL, dimension INTEGER NOT NULL, value TEXT NOT NULL, session BLOB NOT NULL,
                PRIMARY KEY (release, dimension, value, session)) WITHOUT ROWID;
            INSERT INTO text_value_marks SELECT m.release, m.dimension, v.value, m.session FROM session_value_marks m JOIN mark_values v ON v.number = m.value;
            DROP TABLE session_value_marks;
            ALTER TABLE text_value_marks RENAME TO session_value_marks;
            DROP TABLE mark_values;
            DELETE FROM grdb_migrations WHERE identifier = '2026-11-26-mark-values';
            """)
    }

    /// Undoes `2026-11-26-numbered-reports`: reports hold their app, release, kind, screen,
    /// channel and fingerprint as text again, rowids kept.
    static func undoNumberedReports(_ db: Database) throws {
        try undoInstallNetworks(db)
        try db.execute(sql: """
            CREATE TABLE text_reports (
                id BLOB NOT NULL, app TEXT NOT NULL, version TEXT NOT NULL, build TEXT NOT NULL, channel TEXT, kind TEXT NOT NULL,
                occurred_at INTEGER NOT NULL, received_at INTEGER NOT NULL, suspect INTEGER NOT NULL, screen TEXT, fingerprint TEXT NOT NULL,
                body BLOB NOT NULL, flooded INTEGER NOT NULL DEFAULT 0, unknown_session INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (app, id));
            INSERT INTO text_reports (rowid, id, app, version, build, channel, kind, occurred_at, received_at, suspect, screen, fingerprint,
                                      body, flooded, unknown_session)
                SELECT r.rowid, r.id, t.app, t.version, t.build, t.channel, t.kind, r.occurred_at, r.received_at, r.suspect, t.screen, t.fingerprint,
                       r.body, r.flooded, r.unknown_session
                FROM reports r JOIN report_texts t ON t.rowid = r.rowid ORDER BY r.rowid;
            DROP VIEW report_ids;
            DROP VIEW report_texts;
            DROP TABLE reports;
            ALTER TABLE text_reports RENAME TO reports;
            CREATE INDEX reports_by_release_kind ON reports (app, version, build, kind);
            CREATE INDEX reports_by_fingerprint ON reports (app, fingerprint);
            CREATE VIEW report_ids (rowid, app, id) AS
                SELECT rowid, app, CASE WHEN typeof(id) = 'blob' AND length(id) = 16 THEN lower(
                    substr(hex(id), 1, 8) || '-' || substr(hex(id), 9, 4) || '-' || substr(hex(id), 13, 4) || '-' ||
                    substr(hex(id), 17, 4) || '-' || substr(hex(id), 21, 12)) ELSE id END
                FROM reports;
            DELETE FROM grdb_migrations WHERE identifier = '2026-11-26-numbered-reports';
            """)
    }

    /// Unrecords `2026-11-26-admission` (every schema of before it lacks it), so it runs again
    /// after the older migration being tested; it adds only what that one's rebuilds dropped
    /// (the new columns of reports and sessions) and keeps the rest — listings, settings,
    /// networks — as they were.
    /// Undoes the migrations of issue 39 (`Migrations.registerOneNetwork`): installs of a
    /// release without their network and attested counts, sessions without their attested
    /// mark, keys without their owner, challenges without their address.
    static func undoInstallNetworks(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE release_installs DROP COLUMN network;
            ALTER TABLE release_installs DROP COLUMN attested_sessions;
            ALTER TABLE release_installs DROP COLUMN attested_affected_sessions;
            ALTER TABLE release_install_kinds DROP COLUMN attested_affected_sessions;
            ALTER TABLE sessions DROP COLUMN attested;
            ALTER TABLE attested_keys DROP COLUMN owner;
            DROP INDEX attest_challenges_by_address;
            ALTER TABLE attest_challenges DROP COLUMN address;
            ALTER TABLE releases DROP COLUMN last_received;
            ALTER TABLE install_origins DROP COLUMN last_received_at;
            DELETE FROM grdb_migrations WHERE identifier IN ('2026-11-27-install-networks', '2026-11-27-challenge-addresses', '2026-11-27-attested-sessions',
                                                             '2026-11-27-last-received');
            """)
    }

    /// Undoes `Migrations.registerHourlyAffected`: no affected sessions per hour, no kept day 0.
    static func undoHourlyAffected(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE release_hourly DROP COLUMN affected_sessions;
            ALTER TABLE release_hourly_sessions DROP COLUMN affected_sessions;
            ALTER TABLE release_hourly_sessions DROP COLUMN attested_sessions;
            ALTER TABLE releases DROP COLUMN bulk_start_hour;
            DELETE FROM grdb_migrations WHERE identifier = '2026-11-28-hourly-affected';
            """)
    }

    static func undoAdmission(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = '2026-11-26-admission'")
    }
}
