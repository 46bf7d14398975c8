import WatchdogStore

/// Who is calling, once their bearer token checked out.
public struct Principal: Sendable, Equatable {
    public var credentialID: String
    public var role: CredentialRole
    /// The app of an ingest key.
    public var app: String?
    /// The credential's name, recorded in the config audit log.
    public var name: String
    /// Set when the caller is a dashboard session (cookie): changes must carry this token in
    /// `X-CSRF-Token`.
    public var csrfToken: String?
    /// The session cookie's hash, for sign-out.
    public var sessionHash: [UInt8]?
    /// The apps a viewer, operator or admin may touch (`CredentialRecord.apps`); `nil` for
    /// every app. An ingest key's is its own app.
    public var apps: [String]?

    /// The caller a stored credential makes.
    init(_ record: CredentialRecord, csrfToken: String? = nil, sessionHash: [UInt8]? = nil) {
        credentialID = record.id
        role = record.role
        app = record.app
        name = record.name
        self.csrfToken = csrfToken
        self.sessionHash = sessionHash
        apps = record.role == .ingest ? record.app.map { [$0] } : record.apps
    }

    /// Whether the caller may see and touch `app`: an app outside its list is, to it, an app
    /// that does not exist.
    public func sees(_ app: String) -> Bool {
        apps?.contains(app) ?? true
    }

    /// Whether the caller may touch every app (create apps, read lists across apps unfiltered).
    public var seesEveryApp: Bool { apps == nil }

    /// Who the caller is as a person, for four eyes (a proposer cannot approve their own
    /// change): the credential's name — a token's name, or the name a sign-in gave the session.
    public var person: String { name }
}

/// Makes new credentials: a public id and a 256-bit random secret, e.g.
/// `wdi_k3f9a0c1d_<64 hex digits>`; only the secret's SHA-256 is stored.
public enum CredentialIssuer {
    /// A fresh credential, and the token to hand to its owner (shown once, never stored).
    /// - Parameter apps: the apps a viewer, operator or admin token is limited to; `nil` for every app.
    public static func issue(role: CredentialRole, app: String?, name: String, nowMilliseconds: Int64,
                             apps: [String]? = nil) -> (record: CredentialRecord, token: String) {
        var generator = SystemRandomNumberGenerator()
        let id = "k" + (0..<4).map { _ in UInt8.random(in: 0...255, using: &generator) }.hexString
        let secret = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }.hexString
        let prefix: String
        switch role {
        case .ingest: prefix = "wdi"
        case .viewer: prefix = "wdv"
        case .operator: prefix = "wdo"
        case .admin: prefix = "wda"
        }
        let token = "\(prefix)_\(id)_\(secret)"
        let record = CredentialRecord(id: id, role: role, app: app, name: name, secretHash: CredentialHash.sha256(Array(token.utf8)), createdAt: nowMilliseconds,
                                      apps: role == .ingest ? nil : apps)
        return (record, token)
    }
}

/// Random secrets as hex.
enum RandomSecret {
    static func hex(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }.hexString
    }
}
