import Foundation
import GRDB

extension Migrations {
    /// Reports and sessions kept in about a third of the bytes, and the ingest-side session
    /// marks in about a quarter (docs/durability.md, "What is stored"):
    /// - bodies deflated with a preset dictionary (`StoredBody`), the exact client bytes on read;
    /// - ids that are canonical UUIDs as 16 bytes (`CompactID`);
    /// - `reports.session_id` and `install_id` gone: no query read them, the body has them;
    /// - `reports_by_release` gone: a release's reports are read per kind on
    ///   `reports_by_release_kind` and merged; `sessions_by_release` gone: no query used it;
    /// - the three tables that say which sessions are already counted keyed by a release
    ///   number (`release_refs`), the fingerprint as an integer and the compact session id,
    ///   instead of app, version, build and text ids repeated in every row.
    static func registerCompactStorage(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("2026-11-23-compact-storage") { db in
            db.add(function: DatabaseFunction("watchdog_compress", argumentCount: 1, pure: true) { values in
                guard let text = String.fromDatabaseValue(values[0]) else { return values[0] }
                return Data(StoredBody.compress(text))
            })
            db.add(function: DatabaseFunction("watchdog_compact_id", argumentCount: 1, pure: true) { values in
                String.fromDatabaseValue(values[0]).map(CompactID.databaseValue) ?? values[0]
            })
            db.add(function: DatabaseFunction("watchdog_fingerprint", argumentCount: 1, pure: true) { values in
                String.fromDatabaseValue(values[0]).map(CompactFingerprint.databaseValue) ?? values[0]
            })
            try db.execute(sql: """
                CREATE TABLE release_refs (
                    ref INTEGER PRIMARY KEY,
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    UNIQUE (app, version, build)
                );
                INSERT INTO release_refs (app, version, build) SELECT app, version, build FROM releases ORDER BY first_seen;

                CREATE TABLE reports_compact (
                    id BLOB NOT NULL,           -- 16 bytes for a canonical UUID, else TEXT (CompactID)
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    channel TEXT,
                    kind TEXT NOT NULL,
                    occurred_at INTEGER NOT NULL,
                    received_at INTEGER NOT NULL,
                    suspect INTEGER NOT NULL,
                    screen TEXT,
                    fingerprint TEXT NOT NULL,
                    body BLOB NOT NULL,         -- zlib with a preset dictionary (StoredBody)
                    flooded INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (app, id)
                );
                INSERT INTO reports_compact (rowid, id, app, version, build, channel, kind, occurred_at, received_at, suspect, screen, fingerprint, body, flooded)
                    SELECT rowid, watchdog_compact_id(id), app, version, build, channel, kind, occurred_at, received_at, suspect, screen,
                           fingerprint, watchdog_compress(body), flooded
                    FROM reports ORDER BY rowid;
                DROP TABLE reports;
                ALTER TABLE reports_compact RENAME TO reports;
                CREATE INDEX reports_by_release_kind ON reports (app, version, build, kind);
                CREATE INDEX reports_by_fingerprint ON reports (app, fingerprint);

                CREATE TABLE sessions_compact (
                    id BLOB PRIMARY KEY,        -- CompactID
                    app TEXT NOT NULL,
                    version TEXT NOT NULL,
                    build TEXT NOT NULL,
                    channel TEXT,
                    install_id TEXT,
                    started_at INTEGER NOT NULL,
                    received_at INTEGER NOT NULL,
                    body BLOB NOT NULL,         -- StoredBody
                    idiom TEXT
                );
                INSERT INTO sessions_compact (rowid, id, app, version, build, channel, install_id, started_at, received_at, body, idiom)
                    SELECT rowid, watchdog_compact_id(id), app, version, build, channel, install_id, started_at, received_at,
                           watchdog_compress(body), idiom
                    FROM sessions ORDER BY rowid;
                DROP TABLE sessions;
                ALTER TABLE sessions_compact RENAME TO sessions;
                CREATE INDEX sessions_by_start ON sessions (app, started_at);

                -- Sessions with an active report of a fingerprint, and how many (the flood cap).
                CREATE TABLE session_issue_marks (
                    release INTEGER NOT NULL,
                    fingerprint INTEGER NOT NULL,
                    session BLOB NOT NULL,
                    reports INTEGER NOT NULL,
                    PRIMARY KEY (release, fingerprint, session)
                ) WITHOUT ROWID;
                INSERT INTO session_issue_marks (release, fingerprint, session, reports)
                    SELECT r.ref, watchdog_fingerprint(i.fingerprint), watchdog_compact_id(i.session_id), i.reports
                    FROM issue_sessions i JOIN release_refs r ON r.app = i.app AND r.version = i.version AND r.build = i.build;
                DROP TABLE issue_sessions;
                -- Sessions with an active report in a release: affected sessions.
                CREATE TABLE session_affected_marks (
                    release INTEGER NOT NULL,
                    session BLOB NOT NULL,
                    PRIMARY KEY (release, session)
                ) WITHOUT ROWID;
                INSERT INTO session_affected_marks (release, session)
                    SELECT r.ref, watchdog_compact_id(a.session_id)
                    FROM release_affected_sessions a JOIN release_refs r ON r.app = a.app AND r.version = a.version AND r.build = a.build;
                DROP TABLE release_affected_sessions;
                -- The same per value of a dimension (0 kind, 1 screen, 2 keyboard_mode).
                CREATE TABLE session_value_marks (
                    release INTEGER NOT NULL,
                    dimension INTEGER NOT NULL,
                    value TEXT NOT NULL,
                    session BLOB NOT NULL,
                    PRIMARY KEY (release, dimension, value, session)
                ) WITHOUT ROWID;
                INSERT INTO session_value_marks (release, dimension, value, session)
                    SELECT r.ref, CASE v.dimension WHEN 'kind' THEN 0 WHEN 'screen' THEN 1 ELSE 2 END, v.value, watchdog_compact_id(v.session_id)
                    FROM affected_session_values v JOIN release_refs r ON r.app = v.app AND r.version = v.version AND r.build = v.build;
                DROP TABLE affected_session_values;

                -- For people reading the file with sqlite3: report ids as text, as the API shows them.
                CREATE VIEW report_ids (rowid, app, id) AS
                    SELECT rowid, app, CASE WHEN typeof(id) = 'blob' AND length(id) = 16 THEN lower(
                        substr(hex(id), 1, 8) || '-' || substr(hex(id), 9, 4) || '-' || substr(hex(id), 13, 4) || '-' ||
                        substr(hex(id), 17, 4) || '-' || substr(hex(id), 21, 12)) ELSE id END
                    FROM reports;
                """)
        }
    }
}
