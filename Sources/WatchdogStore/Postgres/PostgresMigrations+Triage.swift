extension PostgresMigrations {
    /// As the SQLite migration `2026-11-28-triage` (Migrations+Triage.swift).
    static let triage = """
        CREATE TABLE issue_triage (
            app text NOT NULL REFERENCES apps(id),
            fingerprint text NOT NULL,
            resolution text NOT NULL CHECK (resolution IN ('resolved', 'open')),
            resolved_version text,
            resolved_build text,
            next_release boolean NOT NULL DEFAULT false,
            resolved_at bigint,
            mute_until bigint,
            mute_sessions bigint,
            mute_baseline bigint NOT NULL DEFAULT 0,
            note text NOT NULL DEFAULT '',
            changed_by text NOT NULL,
            changed_at bigint NOT NULL,
            PRIMARY KEY (app, fingerprint)
        );
        """
}
