import WatchdogStore
import WatchdogWire

/// `PATCH`/`PUT …/config?dry_run=true`: the document it would save and whom it would switch.
struct DryRunView: Encodable {
    var dryRun = true
    var document: JSONValue
    var impact: [ConfigService.ReleaseImpact]
    var impactWindowDays: Int

    enum CodingKeys: String, CodingKey {
        case document, impact
        case dryRun = "dry_run"
        case impactWindowDays = "impact_window_days"
    }
}

/// `POST /v1/admin/apps` and `POST …/keys`: shown once, only the hash is kept.
struct IngestKeyView: Encodable {
    var app: String
    var keyID: String
    var ingestKey: String

    enum CodingKeys: String, CodingKey {
        case app
        case keyID = "key_id"
        case ingestKey = "ingest_key"
    }
}
