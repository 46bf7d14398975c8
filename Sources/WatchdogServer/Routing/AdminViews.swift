import WatchdogStore
import WatchdogWire

/// `GET …/config/history`.
struct ConfigHistoryView: Encodable {
    var app: String
    var history: [ConfigChangeView]
}

/// One config change: the documents before and after are open JSON (`JSONValue`), the rest a
/// fixed shape.
struct ConfigChangeView: Encodable {
    var version: Int
    var changedAt: String
    var changedBy: String
    var before: JSONValue
    var after: JSONValue

    init(_ change: ConfigChange) {
        version = change.version
        changedAt = Timestamp.format(milliseconds: change.changedAt)
        changedBy = change.changedBy
        before = change.before.flatMap { JSONValue.parse(Array($0.utf8)) } ?? .null
        after = JSONValue.parse(Array(change.after.utf8)) ?? .null
    }

    enum CodingKeys: String, CodingKey {
        case version, before, after
        case changedAt = "changed_at"
        case changedBy = "changed_by"
    }
}

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
