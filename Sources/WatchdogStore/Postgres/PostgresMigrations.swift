import PostgresClient

/// The PostgreSQL schema, as ordered, named migrations recorded in `watchdog_migrations` — the
/// same discipline as the SQLite ones: a migration that has shipped is never edited.
///
/// Several daemons may start at once against one database: the migrations run in one
/// transaction holding a transaction-level advisory lock, so one node migrates and the others
/// wait for it and then find nothing to do.
enum PostgresMigrations {
    /// The advisory lock key of migrations ("wdmg").
    static let lockKey: Int64 = 0x7764_6D67

    static let all: [(identifier: String, sql: String)] = [
        ("2026-11-23-core", core),
        ("2026-11-23-alerts", alerts),
        ("2026-11-26-admission", admission),
        ("2026-11-26-alert-minimum-installs", alertMinimumInstalls),
        ("2026-11-26-rollouts", rollouts),
        ("2026-11-26-attestation", attestation),
        ("2026-11-26-alert-installs", alertInstalls),
        ("2026-11-27-install-networks", installNetworks),
        ("2026-11-27-challenge-addresses", challengeAddresses),
        ("2026-11-27-attested-sessions", attestedSessions),
        ("2026-11-27-last-received", lastReceived),
        ("2026-11-27-app-roles", appRoles),
        ("2026-11-27-audit-log", auditLog),
        ("2026-11-28-notify", NotifySchema.postgres),
        ("2026-11-28-triage", triage),
        ("2026-11-28-approvals", approvals),
        ("2026-11-28-audit-actions", auditActions),
        ("2026-11-28-refusals", RefusalSchema.postgres),
        ("2026-11-28-hourly-affected", hourlyAffected),
    ]

    static func migrate(_ connection: PostgresConnection) throws {
        try connection.transaction {
            // A migration of a large database may take longer than a request's statement_timeout.
            try connection.execute("SET LOCAL statement_timeout = 0")
            try connection.query("SELECT pg_advisory_xact_lock($1)", [lockKey])
            try connection.execute("CREATE TABLE IF NOT EXISTS watchdog_migrations (identifier text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
            let applied = Set(try connection.query("SELECT identifier FROM watchdog_migrations").map { $0.text(0) })
            for migration in all where !applied.contains(migration.identifier) {
                try connection.execute(migration.sql)
                try connection.query("INSERT INTO watchdog_migrations (identifier) VALUES ($1)", [migration.identifier])
            }
        }
    }

    /// The migrations not applied to the database.
    static func pending(_ connection: PostgresConnection) throws -> [String] {
        let exists = try connection.query("SELECT to_regclass('watchdog_migrations') IS NOT NULL").first?.bool(0) ?? false
        guard exists else { return all.map(\.identifier) }
        let applied = Set(try connection.query("SELECT identifier FROM watchdog_migrations").map { $0.text(0) })
        return all.map(\.identifier).filter { !applied.contains($0) }
    }

    /// Each install of a release gets the network its first counted session start of the
    /// release came from (verdicts weigh a release by network, issue 39); rows of before take
    /// the network the install was first seen from.
    private static let installNetworks = """
        ALTER TABLE release_installs ADD COLUMN network text;
        UPDATE release_installs i SET network = o.network FROM install_origins o WHERE o.app = i.app AND o.install_id = i.install_id;
        """

    /// Each attestation challenge's client address: an address holds at most a few of its
    /// network's, so one flooder does not lock its neighbours out (issue 39).
    private static let challengeAddresses = """
        ALTER TABLE attest_challenges ADD COLUMN address text NOT NULL DEFAULT '';
        CREATE INDEX attest_challenges_by_address ON attest_challenges (app, address);
        """

    /// A session counts as attested only when its start carried the assertion of the key that
    /// first attested its install (`attested_keys.owner`), as in the SQLite store's migration of
    /// the same name (the history before a key is not laundered by it).
    private static let attestedSessions = """
        ALTER TABLE sessions ADD COLUMN attested boolean NOT NULL DEFAULT false;
        ALTER TABLE attested_keys ADD COLUMN owner boolean NOT NULL DEFAULT true;
        ALTER TABLE release_installs ADD COLUMN attested_sessions bigint NOT NULL DEFAULT 0;
        ALTER TABLE release_installs ADD COLUMN attested_affected_sessions bigint NOT NULL DEFAULT 0;
        ALTER TABLE release_install_kinds ADD COLUMN attested_affected_sessions bigint NOT NULL DEFAULT 0;
        UPDATE attested_keys k SET owner = false WHERE EXISTS (
            SELECT 1 FROM attested_keys o WHERE o.app = k.app AND o.install_id = k.install_id
            AND (o.attested_at < k.attested_at OR (o.attested_at = k.attested_at AND o.key_id < k.key_id)));
        UPDATE sessions s SET attested = true FROM attested_keys k
            WHERE s.implausible = 0 AND k.app = s.app AND k.install_id = s.install_id AND k.owner AND k.attested_at <= s.received_at;
        UPDATE release_installs i SET attested_sessions = c.n FROM (
            SELECT app, version, build, install_id, count(*) AS n FROM sessions WHERE attested GROUP BY app, version, build, install_id) c
            WHERE c.app = i.app AND c.version = i.version AND c.build = i.build AND c.install_id = i.install_id;
        UPDATE release_installs i SET attested_affected_sessions = c.n FROM (
            SELECT m.app, m.version, m.build, s.install_id, count(*) AS n FROM session_affected_marks m JOIN sessions s ON s.id = m.session
            WHERE s.attested GROUP BY m.app, m.version, m.build, s.install_id) c
            WHERE c.app = i.app AND c.version = i.version AND c.build = i.build AND c.install_id = i.install_id;
        UPDATE release_install_kinds i SET attested_affected_sessions = c.n FROM (
            SELECT m.app, m.version, m.build, s.install_id, m.value AS kind, count(*) AS n FROM session_value_marks m JOIN sessions s ON s.id = m.session
            WHERE m.dimension = 'kind' AND s.attested GROUP BY m.app, m.version, m.build, s.install_id, m.value) c
            WHERE c.app = i.app AND c.version = i.version AND c.build = i.build AND c.install_id = i.install_id AND c.kind = i.kind;
        """

    /// When the newest row of each release, and the newest session start of each install,
    /// arrived: retention deletes unlisted releases and install origins past its window.
    private static let lastReceived = """
        ALTER TABLE releases ADD COLUMN last_received bigint NOT NULL DEFAULT 0;
        ALTER TABLE install_origins ADD COLUMN last_received_at bigint NOT NULL DEFAULT 0;
        UPDATE releases r SET last_received = l.at FROM (
            SELECT app, version, build, max(received_at) AS at FROM (
                SELECT app, version, build, received_at FROM sessions UNION ALL SELECT app, version, build, received_at FROM reports) AS rows
            GROUP BY app, version, build) l
            WHERE l.app = r.app AND l.version = r.version AND l.build = r.build;
        UPDATE install_origins SET last_received_at = first_received_at;
        UPDATE install_origins o SET last_received_at = greatest(o.first_received_at, l.at) FROM (
            SELECT app, install_id, max(received_at) AS at FROM sessions WHERE install_id IS NOT NULL GROUP BY app, install_id) l
            WHERE l.app = o.app AND l.install_id = o.install_id;
        """

    // Times are milliseconds since the epoch (bigint), as in the SQLite store, so both stores
    // hand the server the same numbers.
    private static let core = """
        CREATE TABLE apps (
            id text PRIMARY KEY,
            created_at bigint NOT NULL
        );
        CREATE TABLE credentials (
            id text PRIMARY KEY,
            role text NOT NULL CHECK (role IN ('ingest', 'viewer', 'admin')),
            app text REFERENCES apps(id),
            name text NOT NULL,
            secret_hash bytea NOT NULL UNIQUE,
            created_at bigint NOT NULL,
            revoked_at bigint
        );
        -- Exactly once per (app, id) across every node and every partition of reports: a
        -- partitioned table's unique index must include the partition key, so the guard is a
        -- table of its own, inserted first in the same transaction.
        CREATE TABLE report_keys (
            app text NOT NULL,
            id text NOT NULL,
            received_at bigint NOT NULL,
            PRIMARY KEY (app, id)
        );
        CREATE INDEX report_keys_by_received ON report_keys (received_at);
        CREATE SEQUENCE report_sequence;
        -- One partition per UTC day of received_at (created ahead by the store), and a
        -- default one for anything outside them; retention drops whole days.
        CREATE TABLE reports (
            sequence bigint NOT NULL DEFAULT nextval('report_sequence'),
            id text NOT NULL,
            app text NOT NULL,
            version text NOT NULL,
            build text NOT NULL,
            channel text,
            kind text NOT NULL,
            occurred_at bigint NOT NULL,
            received_at bigint NOT NULL,
            suspect boolean NOT NULL,
            screen text,
            fingerprint text NOT NULL,
            body bytea NOT NULL,        -- zlib with the preset dictionary (StoredBody), as in SQLite
            flooded boolean NOT NULL DEFAULT false
        ) PARTITION BY RANGE (received_at);
        CREATE TABLE reports_default PARTITION OF reports DEFAULT;
        CREATE INDEX reports_by_app ON reports (app, sequence);
        CREATE INDEX reports_by_release_kind ON reports (app, version, build, kind, sequence);
        CREATE INDEX reports_by_fingerprint ON reports (app, fingerprint, sequence);
        CREATE INDEX reports_by_id ON reports (app, id);
        CREATE TABLE sessions (
            id text PRIMARY KEY,
            app text NOT NULL,
            version text NOT NULL,
            build text NOT NULL,
            channel text,
            install_id text,
            idiom text,
            started_at bigint NOT NULL,
            received_at bigint NOT NULL,
            body bytea NOT NULL
        );
        CREATE INDEX sessions_by_start ON sessions (app, started_at);
        CREATE INDEX sessions_by_received ON sessions (received_at);
        -- Per-session marks behind the affected-session counts and the flood cap.
        CREATE TABLE session_issue_marks (
            app text NOT NULL, version text NOT NULL, build text NOT NULL,
            fingerprint text NOT NULL,
            session text NOT NULL,
            reports bigint NOT NULL,
            PRIMARY KEY (app, version, build, fingerprint, session)
        );
        CREATE TABLE session_affected_marks (
            app text NOT NULL, version text NOT NULL, build text NOT NULL,
            session text NOT NULL,
            PRIMARY KEY (app, version, build, session)
        );
        CREATE TABLE session_value_marks (
            app text NOT NULL, version text NOT NULL, build text NOT NULL,
            dimension text NOT NULL, value text NOT NULL,
            session text NOT NULL,
            PRIMARY KEY (app, version, build, dimension, value, session)
        );
        -- Roll-ups, written in the same transaction as the rows they count, by upserts that add.
        CREATE TABLE releases (
            app text NOT NULL, version text NOT NULL, build text NOT NULL,
            sessions bigint NOT NULL DEFAULT 0,
            affected_sessions bigint NOT NULL DEFAULT 0,
            auto_fixed bigint NOT NULL DEFAULT 0,
            test_crashes bigint NOT NULL DEFAULT 0,
            first_seen bigint NOT NULL,
            last_seen bigint NOT NULL,
            partial_history boolean NOT NULL DEFAULT false,
            PRIMARY KEY (app, version, build)
        );
        CREATE TABLE release_kinds (
            app text NOT NULL, version text NOT NULL, build text NOT NULL,
            kind text NOT NULL,
            reports bigint NOT NULL DEFAULT 0, suspect_reports bigint NOT NULL DEFAULT 0, flooded_reports bigint NOT NULL DEFAULT 0,
            PRIMARY KEY (app, version, build, kind)
        );
        CREATE TABLE release_breakdown (
            app text NOT NULL, version text NOT NULL, build text NOT NULL,
            dimension text NOT NULL, value text NOT NULL, kind text NOT NULL,
            reports bigint NOT NULL DEFAULT 0, suspect_reports bigint NOT NULL DEFAULT 0, flooded_reports bigint NOT NULL DEFAULT 0,
            PRIMARY KEY (app, version, build, dimension, value, kind)
        );
        CREATE TABLE release_hourly (
            app text NOT NULL, version text NOT NULL, build text NOT NULL,
            kind text NOT NULL, hour bigint NOT NULL,
            reports bigint NOT NULL DEFAULT 0, suspect_reports bigint NOT NULL DEFAULT 0, flooded_reports bigint NOT NULL DEFAULT 0,
            PRIMARY KEY (app, version, build, kind, hour)
        );
        CREATE TABLE release_idiom_sessions (
            app text NOT NULL, version text NOT NULL, build text NOT NULL,
            idiom text NOT NULL,
            sessions bigint NOT NULL DEFAULT 0,
            PRIMARY KEY (app, version, build, idiom)
        );
        CREATE TABLE release_affected (
            app text NOT NULL, version text NOT NULL, build text NOT NULL,
            dimension text NOT NULL, value text NOT NULL,
            affected_sessions bigint NOT NULL DEFAULT 0,
            PRIMARY KEY (app, version, build, dimension, value)
        );
        CREATE TABLE release_installs (
            app text NOT NULL, version text NOT NULL, build text NOT NULL,
            install_id text NOT NULL,
            channel text, idiom text,
            sessions bigint NOT NULL DEFAULT 0,
            reports bigint NOT NULL DEFAULT 0,
            affected_sessions bigint NOT NULL DEFAULT 0,
            PRIMARY KEY (app, version, build, install_id)
        );
        CREATE TABLE release_install_kinds (
            app text NOT NULL, version text NOT NULL, build text NOT NULL,
            install_id text NOT NULL, kind text NOT NULL,
            reports bigint NOT NULL DEFAULT 0,
            affected_sessions bigint NOT NULL DEFAULT 0,
            PRIMARY KEY (app, version, build, install_id, kind)
        );
        CREATE TABLE release_hourly_sessions (
            app text NOT NULL, version text NOT NULL, build text NOT NULL,
            hour bigint NOT NULL,
            sessions bigint NOT NULL DEFAULT 0,
            PRIMARY KEY (app, version, build, hour)
        );
        CREATE TABLE issue_releases (
            app text NOT NULL, version text NOT NULL, build text NOT NULL,
            fingerprint text NOT NULL,
            kind text NOT NULL, screen text, view_name text, keyboard_mode text,
            reports bigint NOT NULL DEFAULT 0, suspect_reports bigint NOT NULL DEFAULT 0, flooded_reports bigint NOT NULL DEFAULT 0,
            affected_sessions bigint NOT NULL DEFAULT 0,
            first_seen bigint NOT NULL,
            last_seen bigint NOT NULL,
            PRIMARY KEY (app, version, build, fingerprint)
        );
        CREATE INDEX issue_releases_by_fingerprint ON issue_releases (app, fingerprint, version, build);
        CREATE TABLE keyboard_heights (
            app text NOT NULL, version text NOT NULL, build text NOT NULL,
            model text NOT NULL, mode text NOT NULL, input_mode text NOT NULL, height bigint NOT NULL,
            reports bigint NOT NULL DEFAULT 0,
            window_sized bigint NOT NULL DEFAULT 0,
            PRIMARY KEY (app, version, build, model, mode, input_mode, height)
        );
        CREATE TABLE test_crash_daily (
            app text NOT NULL, install_id text NOT NULL, day bigint NOT NULL,
            crashes bigint NOT NULL DEFAULT 0,
            PRIMARY KEY (app, day, install_id)
        );
        CREATE TABLE client_drops (
            id text UNIQUE,
            app text NOT NULL, version text NOT NULL, build text NOT NULL,
            evicted bigint NOT NULL,
            quarantined bigint NOT NULL,
            received_at bigint NOT NULL
        );
        CREATE INDEX client_drops_by_release ON client_drops (app, version, build);
        CREATE TABLE config_documents (
            app text PRIMARY KEY REFERENCES apps(id),
            version bigint NOT NULL,
            document text NOT NULL,
            updated_at bigint NOT NULL,
            updated_by text NOT NULL
        );
        CREATE TABLE config_changes (
            app text NOT NULL REFERENCES apps(id),
            version bigint NOT NULL,
            changed_at bigint NOT NULL,
            changed_by text NOT NULL,
            before text,
            after text NOT NULL,
            PRIMARY KEY (app, version)
        );
        CREATE TABLE dashboard_sessions (
            id_hash bytea PRIMARY KEY,
            credential_id text NOT NULL REFERENCES credentials(id),
            csrf_token text NOT NULL,
            created_at bigint NOT NULL,
            expires_at bigint NOT NULL
        );
        CREATE TABLE login_links (
            code_hash bytea PRIMARY KEY,
            credential_id text NOT NULL REFERENCES credentials(id),
            expires_at bigint NOT NULL
        );
        """

    private static let alerts = """
        CREATE TABLE alert_hooks (
            id text PRIMARY KEY,
            app text NOT NULL REFERENCES apps(id),
            name text NOT NULL,
            url text NOT NULL,
            secret text NOT NULL,
            created_at bigint NOT NULL,
            created_by text NOT NULL
        );
        CREATE INDEX alert_hooks_by_app ON alert_hooks (app);
        CREATE TABLE alert_rules (
            id text PRIMARY KEY,
            app text NOT NULL REFERENCES apps(id),
            name text NOT NULL,
            condition text NOT NULL,
            kind text,
            minimum_sessions bigint NOT NULL DEFAULT 0,
            minimum_affected_sessions bigint NOT NULL DEFAULT 0,
            threshold double precision,
            hook_id text NOT NULL REFERENCES alert_hooks(id),
            created_at bigint NOT NULL,
            created_by text NOT NULL
        );
        CREATE INDEX alert_rules_by_app ON alert_rules (app);
        CREATE TABLE alert_firings (
            rule_id text NOT NULL REFERENCES alert_rules(id) ON DELETE CASCADE,
            subject text NOT NULL,
            release_version text NOT NULL,
            release_build text NOT NULL,
            alert_id text NOT NULL,
            fired_at bigint NOT NULL,
            PRIMARY KEY (rule_id, subject)
        );
        CREATE TABLE alert_deliveries (
            id bigserial PRIMARY KEY,
            alert_id text NOT NULL,
            hook_id text NOT NULL REFERENCES alert_hooks(id) ON DELETE CASCADE,
            app text NOT NULL,
            rule_id text,
            event text NOT NULL,
            body text NOT NULL,
            created_at bigint NOT NULL,
            state text NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
            attempts bigint NOT NULL DEFAULT 0,
            next_attempt_at bigint,
            last_attempt_at bigint,
            last_status bigint,
            last_latency_ms bigint,
            last_error text,
            delivered_at bigint
        );
        CREATE INDEX alert_deliveries_due ON alert_deliveries (state, next_attempt_at);
        CREATE INDEX alert_deliveries_by_hook ON alert_deliveries (hook_id, id);
        """

    /// As the SQLite migration `2026-11-26-admission` (Migrations+Admission.swift).
    private static let admission = """
        ALTER TABLE sessions ADD COLUMN network text;
        ALTER TABLE sessions ADD COLUMN implausible bigint NOT NULL DEFAULT 0;
        ALTER TABLE reports ADD COLUMN unknown_session boolean NOT NULL DEFAULT false;
        ALTER TABLE releases ADD COLUMN implausible_sessions bigint NOT NULL DEFAULT 0;
        ALTER TABLE releases ADD COLUMN unknown_session_reports bigint NOT NULL DEFAULT 0;
        CREATE TABLE install_origins (
            app text NOT NULL,
            install_id text NOT NULL,
            network text,
            first_received_at bigint NOT NULL,
            implausible boolean NOT NULL DEFAULT false,
            PRIMARY KEY (app, install_id)
        );
        CREATE TABLE ingest_hourly_counts (
            app text NOT NULL,
            scope bigint NOT NULL,
            key text NOT NULL,
            hour bigint NOT NULL,
            count bigint NOT NULL,
            PRIMARY KEY (app, scope, key, hour)
        );
        CREATE INDEX ingest_hourly_counts_by_hour ON ingest_hourly_counts (hour);
        CREATE TABLE release_networks (
            app text NOT NULL, version text NOT NULL, build text NOT NULL,
            network text NOT NULL,
            sessions bigint NOT NULL DEFAULT 0,
            PRIMARY KEY (app, version, build, network)
        );
        CREATE TABLE release_admissions (
            app text NOT NULL, version text NOT NULL, build text NOT NULL,
            state text NOT NULL CHECK (state IN ('declared', 'admitted')),
            admitted_by text NOT NULL,
            admitted_at bigint NOT NULL,
            reason text NOT NULL,
            PRIMARY KEY (app, version, build)
        );
        CREATE INDEX release_admissions_by_time ON release_admissions (app, admitted_by, admitted_at);
        CREATE TABLE app_admission (
            app text PRIMARY KEY REFERENCES apps(id),
            settings text NOT NULL
        );
        INSERT INTO release_admissions (app, version, build, state, admitted_by, admitted_at, reason)
            SELECT app, version, build, 'admitted', 'upgrade', (extract(epoch FROM now()) * 1000)::bigint, 'listed before admission existed'
            FROM releases;
        """

    /// `Migrations.registerAlerts`' `2026-11-26-alert-minimum-installs`, the same here.
    private static let alertMinimumInstalls = """
        ALTER TABLE alert_rules ADD COLUMN minimum_installs bigint NOT NULL DEFAULT 0;
        UPDATE alert_rules SET minimum_installs = 20 WHERE condition IN ('release_regressed', 'new_issue', 'glitch_free_rate_below');
        """

    /// `Migrations.registerAlerts`' `2026-11-26-alert-installs`, the same here.
    private static let alertInstalls = """
        ALTER TABLE alert_rules ADD COLUMN installs text NOT NULL DEFAULT 'all' CHECK (installs IN ('all', 'attested'));
        """

    /// Guarded rollouts (`Migrations+Rollouts.swift` says what each column holds).
    private static let rollouts = """
        ALTER TABLE config_changes ADD COLUMN note text;
        CREATE TABLE rollouts (
            app text NOT NULL REFERENCES apps(id),
            rule_id text NOT NULL,
            revision bigint NOT NULL,
            status text NOT NULL,
            document text NOT NULL,
            updated_at bigint NOT NULL,
            PRIMARY KEY (app, rule_id)
        );
        """

    /// As the SQLite migration `2026-11-26-attestation` (Migrations+Attestation.swift).
    private static let attestation = """
        CREATE TABLE attest_challenges (
            app text NOT NULL,
            hash bytea NOT NULL,
            network text NOT NULL,
            expires_at bigint NOT NULL,
            PRIMARY KEY (app, hash)
        );
        CREATE INDEX attest_challenges_by_network ON attest_challenges (app, network, expires_at);
        CREATE TABLE attested_keys (
            app text NOT NULL,
            key_id bytea NOT NULL,
            install_id text NOT NULL,
            public_key bytea NOT NULL,
            counter bigint NOT NULL,
            environment text NOT NULL,
            attested_at bigint NOT NULL,
            PRIMARY KEY (app, key_id)
        );
        CREATE INDEX attested_keys_by_install ON attested_keys (app, install_id);
        CREATE TABLE app_attestation (
            app text PRIMARY KEY REFERENCES apps(id),
            settings text NOT NULL
        );
        """

    /// As the SQLite migration `2026-11-27-app-roles` (Migrations+AppRoles.swift): the
    /// `operator` role and the apps a token is limited to (NULL: every app).
    private static let appRoles = """
        ALTER TABLE credentials DROP CONSTRAINT credentials_role_check;
        ALTER TABLE credentials ADD CONSTRAINT credentials_role_check CHECK (role IN ('ingest', 'viewer', 'operator', 'admin'));
        ALTER TABLE credentials ADD COLUMN apps text;
        """

    /// As the SQLite migration `2026-11-27-audit-log` (Migrations+AppRoles.swift).
    private static let auditLog = """
        CREATE TABLE audit_log (
            id bigserial PRIMARY KEY,
            at bigint NOT NULL,
            actor text NOT NULL,
            address text NOT NULL,
            action text NOT NULL,
            app text,
            before text,
            after text
        );
        CREATE INDEX audit_log_by_time ON audit_log (at);
        CREATE INDEX audit_log_by_app ON audit_log (app, id);
        """
}
