import ArgumentParser
import WatchdogServer
import WatchdogStore

struct Apps: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Manage apps.", subcommands: [Add.self, Admission.self, Attestation.self, Approvals.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an app and print its ingest key alone on stdout.",
            discussion: "Works while `serve` runs on the same data dir. The key is shown once; only its hash is stored."
        )

        @OptionGroup var common: CommonOptions

        @Argument(help: "The app's bundle id, e.g. com.example.mail.")
        var app: String

        @Flag(help: "If the app exists, issue another ingest key for it instead of failing.")
        var anotherKey = false

        @Option(help: "How its releases are listed: auto (the default: once enough installs on enough networks), strict (declared only) or open (every check off: testers on one network).")
        var admission: String?

        func run() throws {
            do { try AppName.validate(app) } catch { throw ValidationError(error.message) }
            let store = try common.openStore()
            let now = WatchdogServer.systemClock()
            let settings = try admission.map(Admission.named)
            let created = try AuditExport.recording(store, action: "app.add", app: app, actor: cliActor(), now: now) {
                try store.createApp(app, createdAtMilliseconds: now)
            }
            if !created && !anotherKey {
                throw CLIError("app \(app) already exists; pass --another-key to issue an additional ingest key")
            }
            if let settings { try audited(store, "admission.save", app: app, after: settings.json) { try store.saveAdmissionSettings(app: app, json: settings.json) } }
            let (record, token) = CredentialIssuer.issue(role: .ingest, app: app, name: "\(app) ingest key", nowMilliseconds: now)
            try audited(store, "key.add", app: app, after: "{\"credential\": \"\(record.id)\"}") { try store.addCredential(record) }
            try store.close()
            say(created ? "created app \(app) with ingest key \(record.id)" : "issued ingest key \(record.id) for \(app)")
            emit(token)
        }
    }
}

struct Tokens: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Manage viewer, operator and admin tokens.", subcommands: [Add.self, Revoke.self])

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a credential (token or ingest key) by its id, e.g. k3f9a0c1d.",
            discussion: "Its dashboard sessions end too; a running serve stops accepting it within a second."
        )

        @OptionGroup var common: CommonOptions

        @Argument(help: "The credential's id (the part after the prefix: wdv_<id>_…).")
        var id: String

        func run() throws {
            let store = try common.openStore()
            let now = WatchdogServer.systemClock()
            let revoked = try AuditExport.recording(store, action: "token.revoke", app: nil, actor: cliActor(), after: "{\"credential\": \"\(id)\"}", now: now) {
                try store.revokeCredentials(id: id, name: nil, atMilliseconds: now)
            }
            try store.close()
            guard revoked > 0 else { throw CLIError("no live credential \(id)") }
            say("revoked \(id)")
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a viewer, operator or admin token and print it alone on stdout.",
            discussion: """
                Works while `serve` runs on the same data dir. The token is shown once; only its hash is stored. \
                With --app (repeatable), the token sees and touches only those apps: any other app is, to it, an app that does not exist.
                """
        )

        @OptionGroup var common: CommonOptions

        @Option(help: "viewer (read stats and settings), operator (also config, rollouts, alerts, releases) or admin (also apps, keys, admission, attestation).")
        var role: String

        @Option(name: .customLong("app"), help: "An app the token is limited to (repeatable); without it, every app.")
        var apps: [String] = []

        @Argument(help: "Who holds the token; recorded in the config audit log.")
        var name: String

        func validate() throws {
            guard let role = CredentialRole(rawValue: role), role != .ingest else {
                throw ValidationError("--role must be viewer, operator or admin, got \(role)")
            }
            guard !name.isEmpty, name.utf8.count <= 128 else { throw ValidationError("NAME must be 1–128 bytes") }
            for app in apps {
                do { try AppName.validate(app) } catch { throw ValidationError("--app: \(error.message)") }
            }
        }

        func run() throws {
            let store = try common.openStore()
            for app in apps where try !store.appExists(app) {
                try store.close()
                throw CLIError("no app \(app); create it first with watchdogd apps add \(app)")
            }
            let (record, token) = CredentialIssuer.issue(role: CredentialRole(rawValue: role) ?? .viewer, app: nil, name: name,
                                                         nowMilliseconds: WatchdogServer.systemClock(), apps: apps.isEmpty ? nil : apps)
            let after = "{\"credential\": \"\(record.id)\", \"name\": \(jsonQuoted(name)), \"role\": \"\(role)\", \"apps\": "
                + (record.apps.map { "[" + $0.map { "\"\($0)\"" }.joined(separator: ", ") + "]" } ?? "null") + "}"
            try AuditExport.recording(store, action: "token.add", app: nil, actor: cliActor(), after: after, now: record.createdAt) {
                try store.addCredential(record)
            }
            try store.close()
            say("created \(role) token \(record.id) for \(name)" + (apps.isEmpty ? " (every app)" : " (apps: \(record.apps?.joined(separator: ", ") ?? ""))"))
            emit(token)
        }
    }
}

struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create or upgrade the database schema, then exit.")

    @OptionGroup var common: CommonOptions

    func run() throws {
        let store = try common.openStore()
        say("database \(Self.name(store)) is at the current schema")
        try store.close()
    }

    static func name(_ store: any TelemetryStore) -> String {
        (store as? SQLiteStore)?.path ?? (store as? PostgresStore)?.displayURL ?? "?"
    }
}

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Check the database's integrity and schema; exit 1 if anything is wrong.")

    @OptionGroup var common: CommonOptions

    func run() throws {
        let store = try common.openStore()
        // PostgreSQL checks its own pages (data checksums, amcheck); the schema is checked here.
        let integrity = try (store as? SQLiteStore)?.integrityCheck() ?? ["ok"]
        let pending = try (store as? SQLiteStore)?.pendingMigrations() ?? (store as? PostgresStore)?.pendingMigrations() ?? []
        try store.close()
        guard integrity == ["ok"] else { throw CLIError("integrity check failed:\n" + integrity.joined(separator: "\n")) }
        guard pending.isEmpty else { throw CLIError("migrations not applied: \(pending.joined(separator: ", "))") }
        say("ok: \(Migrate.name(store)) passes integrity_check and has every migration")
    }
}
