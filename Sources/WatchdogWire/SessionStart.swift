/// A session start, posted to `POST /v1/sessions`: the denominator that turns counts into rates.
public struct SessionStart: Codable, Hashable, Sendable {
    /// Client-generated UUID; the idempotency key.
    public var id: String
    public var installId: String?
    /// RFC 3339.
    public var startedAt: String
    public var app: String
    public var release: Release
    public var device: Device?

    public init(id: String, installId: String? = nil, startedAt: String, app: String, release: Release, device: Device? = nil) {
        self.id = id
        self.installId = installId
        self.startedAt = startedAt
        self.app = app
        self.release = release
        self.device = device
    }

    enum CodingKeys: String, CodingKey {
        case id, app, release, device
        case installId = "install_id"
        case startedAt = "started_at"
    }
}
