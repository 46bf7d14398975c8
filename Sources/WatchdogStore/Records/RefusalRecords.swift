/// Refusals of one kind and code for an app in one UTC hour, as the servers count them
/// (docs/security.md, "Refusals"): each node adds its own counts, so the stored ones are the
/// cluster's.
public struct RefusalCount: Sendable, Hashable {
    public var app: String
    /// `attestation` (`POST /v1/attest`, its challenge), `upload` (`POST /v1/reports`, `/v1/sessions`)
    /// or `would_refuse` (uploads stored under `observe` without an assertion).
    public var kind: String
    public var code: String
    /// Milliseconds at the start of the UTC hour.
    public var hour: Int64
    public var count: Int

    public init(app: String, kind: String, code: String, hour: Int64, count: Int) {
        self.app = app
        self.kind = kind
        self.code = code
        self.hour = hour
        self.count = count
    }
}
