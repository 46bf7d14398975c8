extension PostgresMigrations {
    /// As the SQLite migration `2026-11-28-approvals` (Migrations+Approvals.swift).
    static let approvals = """
        CREATE TABLE approval_settings (
            app text PRIMARY KEY REFERENCES apps(id),
            require text NOT NULL
        );
        CREATE TABLE proposals (
            id text PRIMARY KEY,
            app text NOT NULL REFERENCES apps(id),
            kinds text NOT NULL,
            action text NOT NULL,
            proposer text NOT NULL,
            created_at bigint NOT NULL,
            expires_at bigint NOT NULL,
            method text NOT NULL,
            path text NOT NULL,
            query text NOT NULL,
            body text NOT NULL,
            if_match text,
            impact text,
            status text NOT NULL CHECK (status IN ('pending', 'applying', 'approved', 'refused', 'failed')),
            decided_by text,
            decided_at bigint,
            outcome text
        );
        CREATE INDEX proposals_by_app ON proposals (app, created_at);
        """

    /// As the SQLite migration `2026-11-28-audit-actions`: rows of before get the dotted names.
    static let auditActions = AuditActions.renameSQL
}
