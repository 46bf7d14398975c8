/// What a credential may do.
public enum CredentialRole: String, Sendable, CaseIterable {
    /// Ships inside an app: posts reports and sessions for its app, reads its config.
    case ingest
    /// Reads stats (dashboard) and settings.
    case viewer
    /// What a viewer does, and changes config, rollouts, alert rules and hooks, and releases.
    case `operator`
    /// Everything: also apps, ingest keys, admission and attestation settings.
    case admin

    /// Whether a credential of this role may do what `needed` may (viewer < operator < admin;
    /// ingest keys are a role apart).
    public func includes(_ needed: CredentialRole) -> Bool {
        switch (self, needed) {
        case (.ingest, .ingest): return true
        case (.ingest, _), (_, .ingest): return false
        default: return rank >= needed.rank
        }
    }

    private var rank: Int {
        switch self {
        case .ingest: return 0
        case .viewer: return 1
        case .operator: return 2
        case .admin: return 3
        }
    }
}

/// A credential as stored: the secret itself is never kept, only its SHA-256.
public struct CredentialRecord: Sendable, Equatable {
    /// Public identifier, e.g. `k_3f9a0c1d` (shown in lists, used to revoke).
    public var id: String
    public var role: CredentialRole
    /// The app of an ingest key; `nil` for viewer, operator and admin tokens.
    public var app: String?
    /// A person's or a system's name, for the audit log.
    public var name: String
    public var secretHash: [UInt8]
    public var createdAt: Int64
    /// The apps a viewer, operator or admin token may touch, sorted; `nil` for every app
    /// (tokens made before roles per app are every-app tokens). Ingest keys: `nil` (`app`).
    public var apps: [String]?

    public init(id: String, role: CredentialRole, app: String?, name: String, secretHash: [UInt8], createdAt: Int64, apps: [String]? = nil) {
        self.id = id
        self.role = role
        self.app = app
        self.name = name
        self.secretHash = secretHash
        self.createdAt = createdAt
        self.apps = apps.map { Array(Set($0)).sorted() }
    }

    /// `apps` as stored in the `apps` column: `nil` for every app, else the names joined by
    /// commas (app names never contain one).
    public var appsColumn: String? { apps?.joined(separator: ",") }

    /// The `apps` of a stored `apps` column.
    public static func apps(column: String?) -> [String]? {
        column.map { $0.split(separator: ",").map(String.init) }
    }
}

/// One version of an app's remote-config document (`{"defaults": {...}, "rules": [...]}`).
public struct ConfigRecord: Sendable, Equatable {
    public var app: String
    public var version: Int
    /// The document as JSON, without its version.
    public var document: String
    public var updatedAt: Int64
    /// The name of the credential that made the change.
    public var updatedBy: String
    /// Why the version was made, when its author said (a guarded rollout's evidence); at most
    /// a few kilobytes, kept in the history with the version.
    public var note: String?

    public init(app: String, version: Int, document: String, updatedAt: Int64, updatedBy: String, note: String? = nil) {
        self.app = app
        self.version = version
        self.document = document
        self.updatedAt = updatedAt
        self.updatedBy = updatedBy
        self.note = note
    }
}

/// One version of a config document, with who changed it and what it was before.
public struct ConfigChange: Sendable, Equatable {
    public var app: String
    public var version: Int
    public var changedAt: Int64
    public var changedBy: String
    /// The document before (`nil` for the first version).
    public var before: String?
    public var after: String
    /// The version's note (`ConfigRecord.note`).
    public var note: String? = nil
}

/// One version in an app's config history, without its documents.
public struct ConfigVersion: Sendable, Equatable {
    public var version: Int
    public var changedAt: Int64
    public var changedBy: String
    /// The version's note (`ConfigRecord.note`).
    public var note: String?

    public init(version: Int, changedAt: Int64, changedBy: String, note: String? = nil) {
        self.version = version
        self.changedAt = changedAt
        self.changedBy = changedBy
        self.note = note
    }
}

/// Test crashes one install reported on one UTC day.
public struct TestCrashCount: Sendable, Equatable {
    public var app: String
    public var installID: String
    public var crashes: Int

    public init(app: String, installID: String, crashes: Int) {
        self.app = app
        self.installID = installID
        self.crashes = crashes
    }
}

/// An install seen recently, as its last session start described it.
public struct RecentInstall: Sendable, Equatable {
    public var installID: String
    public var release: ReleaseID
    public var channel: String?
    public var idiom: String?
}

/// A signed-in browser: the cookie's hash, whose credential it acts as, and its CSRF token.
public struct DashboardSession: Sendable, Equatable {
    public var idHash: [UInt8]
    public var credentialID: String
    public var csrfToken: String
    public var createdAt: Int64
    public var expiresAt: Int64

    public init(idHash: [UInt8], credentialID: String, csrfToken: String, createdAt: Int64, expiresAt: Int64) {
        self.idHash = idHash
        self.credentialID = credentialID
        self.csrfToken = csrfToken
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}
