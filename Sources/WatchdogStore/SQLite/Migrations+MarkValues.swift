import GRDB

extension Migrations {
    /// The per-value session marks keyed by a number of `mark_values` instead of the value's
    /// text (a kind, a screen, a keyboard mode) repeated in each of their rows: 83 B a report
    /// at 1 M demo reports (docs/performance.md). One table for every app: a mark's release
    /// already says whose it is, and a value several apps share (the built-in kinds, the
    /// keyboard modes) is stored once. Numbers are handed out most frequent value first, so the
    /// common ones fit the one-byte integers of SQLite's records; every mark is kept, so a
    /// session counted for a value before stays counted.
    static func registerMarkValues(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("2026-11-26-mark-values") { db in
            try db.execute(sql: """
                CREATE TABLE mark_values (
                    number INTEGER PRIMARY KEY,
                    value TEXT NOT NULL UNIQUE
                );
                INSERT INTO mark_values (value) SELECT value FROM session_value_marks GROUP BY value ORDER BY count(*) DESC, value;
                CREATE TABLE session_value_marks_numbered (
                    release INTEGER NOT NULL,
                    dimension INTEGER NOT NULL,
                    value INTEGER NOT NULL,     -- mark_values.number
                    session BLOB NOT NULL,
                    PRIMARY KEY (release, dimension, value, session)
                ) WITHOUT ROWID;
                INSERT INTO session_value_marks_numbered (release, dimension, value, session)
                    SELECT m.release, m.dimension, v.number, m.session FROM session_value_marks m JOIN mark_values v ON v.value = m.value
                    ORDER BY 1, 2, 3, 4;
                DROP TABLE session_value_marks;
                ALTER TABLE session_value_marks_numbered RENAME TO session_value_marks;
                """)
        }
    }
}
