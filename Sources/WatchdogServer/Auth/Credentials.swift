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
}

/// Makes new credentials: a public id and a 256-bit random secret, e.g.
/// `wdi_k3f9a0c1d_<64 hex digits>`; only the secret's SHA-256 is stored.
public enum CredentialIssuer {
    /// A fresh credential, and the token to hand to its owner (shown once, never stored).
    public static func issue(role: CredentialRole, app: String?, name: String, nowMilliseconds: Int64) -> (record: CredentialRecord, token: String) {
        var generator = SystemRandomNumberGenerator()
        let id = "k" + (0..<4).map { _ in UInt8.random(in: 0...255, using: &generator) }.hexString
        let secret = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }.hexString
        let prefix: String
        switch role {
        case .ingest: prefix = "wdi"
        case .viewer: prefix = "wdv"
        case .admin: prefix = "wda"
        }
        let token = "\(prefix)_\(id)_\(secret)"
        let record = CredentialRecord(id: id, role: role, app: app, name: name, secretHash: CredentialHash.sha256(Array(token.utf8)), createdAt: nowMilliseconds)
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
