import Foundation
import GRDB

extension Migrations {
    /// Reports keyed by numbers instead of text repeated in every row and in every index entry:
    /// the release as its `release_refs` number, the app, kind, screen and channel as
    /// `mark_values` numbers (one table of numbered texts, shared with the session marks) and the
    /// fingerprint as the integer it spells (`CompactFingerprint`). On the benchmark's payload the
    /// three indexes on reports took 162 B a report, with the app's id in each; the texts are read
    /// back by number (docs/performance.md, "Disk"). Numbers are handed out most frequent text
    /// first, so the common ones fit SQLite's one-byte integers. Rowids are kept: they are the
    /// reports' order, their sequence in the API and in a copy to PostgreSQL.
    static func registerNumberedReports(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("2026-11-26-numbered-reports") { db in
            db.add(function: DatabaseFunction("watchdog_fingerprint", argumentCount: 1, pure: true) { values in
                String.fromDatabaseValue(values[0]).map(CompactFingerprint.databaseValue) ?? values[0]
            })
            try db.execute(sql: """
                INSERT OR IGNORE INTO mark_values (value)
                    SELECT value FROM (
                        SELECT app AS value FROM reports UNION ALL SELECT kind FROM reports
                        UNION ALL SELECT screen FROM reports WHERE screen IS NOT NULL
                        UNION ALL SELECT channel FROM reports WHERE channel IS NOT NULL)
                    GROUP BY value ORDER BY count(*) DESC, value;
                INSERT OR IGNORE INTO release_refs (app, version, build)
                    SELECT app, version, build FROM reports GROUP BY app, version, build ORDER BY min(rowid);

                CREATE TABLE reports_numbered (
                    id BLOB NOT NULL,               -- CompactID
                    app INTEGER NOT NULL,           -- mark_values.number of the app's id
                    release INTEGER NOT NULL,       -- release_refs.ref
                    kind INTEGER NOT NULL,          -- mark_values.number
                    fingerprint NOT NULL,           -- CompactFingerprint: the integer of `fp_` + 16 hex digits
                    screen INTEGER,                 -- mark_values.number
                    channel INTEGER,                -- mark_values.number
                    occurred_at INTEGER NOT NULL,
                    received_at INTEGER NOT NULL,
                    suspect INTEGER NOT NULL,
                    flooded INTEGER NOT NULL DEFAULT 0,
                    unknown_session INTEGER NOT NULL DEFAULT 0,
                    body BLOB NOT NULL,             -- StoredBody
                    PRIMARY KEY (app, id)
                );
                INSERT INTO reports_numbered (rowid, id, app, release, kind, fingerprint, screen, channel, occurred_at, received_at,
                                              suspect, flooded, unknown_session, body)
                    SELECT r.rowid, r.id, a.number, rr.ref, k.number, watchdog_fingerprint(r.fingerprint), s.number, c.number,
                           r.occurred_at, r.received_at, r.suspect, r.flooded, r.unknown_session, r.body
                    FROM reports r
                    JOIN mark_values a ON a.value = r.app
                    JOIN release_refs rr ON rr.app = r.app AND rr.version = r.version AND rr.build = r.build
                    JOIN mark_values k ON k.value = r.kind
                    LEFT JOIN mark_values s ON s.value = r.screen
                    LEFT JOIN mark_values c ON c.value = r.channel
                    ORDER BY r.rowid;
                DROP VIEW report_ids;
                DROP TABLE reports;
                ALTER TABLE reports_numbered RENAME TO reports;
                CREATE INDEX reports_by_release_kind ON reports (release, kind);
                CREATE INDEX reports_by_fingerprint ON reports (app, fingerprint);

                -- For people reading the file with sqlite3: report ids as the API shows them, and each report's texts.
                CREATE VIEW report_ids (rowid, app, id) AS
                    SELECT r.rowid, a.value, CASE WHEN typeof(r.id) = 'blob' AND length(r.id) = 16 THEN lower(
                        substr(hex(r.id), 1, 8) || '-' || substr(hex(r.id), 9, 4) || '-' || substr(hex(r.id), 13, 4) || '-' ||
                        substr(hex(r.id), 17, 4) || '-' || substr(hex(r.id), 21, 12)) ELSE r.id END
                    FROM reports r JOIN mark_values a ON a.number = r.app;
                CREATE VIEW report_texts (rowid, app, version, build, channel, kind, screen, fingerprint) AS
                    SELECT r.rowid, a.value, rr.version, rr.build, c.value, k.value, s.value,
                           CASE typeof(r.fingerprint) WHEN 'integer' THEN printf('fp_%016llx', r.fingerprint) ELSE r.fingerprint END
                    FROM reports r JOIN mark_values a ON a.number = r.app JOIN release_refs rr ON rr.ref = r.release
                    JOIN mark_values k ON k.number = r.kind LEFT JOIN mark_values s ON s.number = r.screen
                    LEFT JOIN mark_values c ON c.number = r.channel;
                """)
        }
    }
}
