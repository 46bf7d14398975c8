import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// `GET …/config/history` (viewers too): the versions of an app's config, newest first, a page
/// at a time and without their documents — a config of 64 rules is ~30 KB, and an app changed
/// a hundred times would answer megabytes — and `GET …/config/history/{version}`: one version
/// with the document it made current (`after`) and the one it replaced (`before`), the
/// dashboard's diff.
struct ConfigHistoryRoutes: Sendable {
    let store: any TelemetryStore

    /// Versions a page lists unless `limit` says otherwise, and at most.
    static let defaultLimit = 20
    static let maximumLimit = 100
    /// The largest `before` (as `POST …/rollback` takes versions up to it).
    static let maximumVersion = 1_000_000_000

    /// `?limit=N&before=V`: the `limit` newest versions older than `V`; `next` is the link to
    /// the page after, `null` on the last.
    func page(app: String, query: [String: String]) throws(APIError) -> HTTPResponse {
        let limit = try ReleaseLookup.limit(query["limit"], default: Self.defaultLimit, maximum: Self.maximumLimit)
        var before: Int?
        if let text = query["before"] {
            guard let version = Int(text), (1...Self.maximumVersion).contains(version) else {
                throw .badRequest("invalid_parameter", "before must be a config version, a whole number from 1 to \(Self.maximumVersion), got \(text.prefix(20))")
            }
            before = version
        }
        guard try storeCall({ try store.appExists(app) }) else { throw .notFound("no app \(app)") }
        // One more than asked: whether there is a next page, without counting.
        let versions = try storeCall { try store.configVersions(app: app, before: before, limit: limit + 1) }
        let shown = Array(versions.prefix(limit))
        let next = versions.count > limit ? shown.last.map { "/v1/admin/apps/\(app)/config/history?before=\($0.version)&limit=\(limit)" } : nil
        return JSONBody.response(ConfigHistoryView(app: app, history: shown.map(ConfigVersionView.init), next: next))
    }

    /// `…/config/history/{version}`.
    func entry(app: String, version: String) throws(APIError) -> HTTPResponse {
        guard let number = Int(version), number >= 1, let change = try storeCall({ try store.configChange(app: app, version: number) }) else {
            throw .notFound("app \(app) has no config version \(version.prefix(20))")
        }
        return JSONBody.response(ConfigChangeView(change))
    }
}

/// `GET …/config/history`: one page.
struct ConfigHistoryView: Encodable {
    var app: String
    var history: [ConfigVersionView]
    /// The next page's path and query, `nil` (shown as `null`) on the last page.
    @NullWhenAbsent var next: String? = nil
}

/// One version in the list: who made it current and when.
struct ConfigVersionView: Encodable {
    var version: Int
    var changedAt: String
    var changedBy: String
    /// Why it was made, when its author said (a guarded rollout's step and evidence).
    @NullWhenAbsent var note: String? = nil

    init(_ version: ConfigVersion) {
        self.version = version.version
        changedAt = Timestamp.format(milliseconds: version.changedAt)
        changedBy = version.changedBy
        note = version.note
    }

    enum CodingKeys: String, CodingKey {
        case version, note
        case changedAt = "changed_at"
        case changedBy = "changed_by"
    }
}

/// One config change: the documents before and after are open JSON (`JSONValue`), the rest a
/// fixed shape.
struct ConfigChangeView: Encodable {
    var version: Int
    var changedAt: String
    var changedBy: String
    var before: JSONValue
    var after: JSONValue
    @NullWhenAbsent var note: String? = nil

    init(_ change: ConfigChange) {
        version = change.version
        changedAt = Timestamp.format(milliseconds: change.changedAt)
        changedBy = change.changedBy
        note = change.note
        before = change.before.flatMap { JSONValue.parse(Array($0.utf8)) } ?? .null
        after = JSONValue.parse(Array(change.after.utf8)) ?? .null
    }

    enum CodingKeys: String, CodingKey {
        case version, before, after, note
        case changedAt = "changed_at"
        case changedBy = "changed_by"
    }
}
