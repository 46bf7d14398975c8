import Foundation
import Locking
import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// Serves effective configs from memory and applies admin changes.
///
/// Per app the document is compiled once per change; results are cached by the set of rules
/// a client matches (and whether its test-crash budget is used up), as ready-to-send bytes
/// with their ETag. A request costs the rule checks (cheap field compares and one hash per
/// percentage rule) and a dictionary lookup.
final class ConfigService: Sendable {
    /// Ready-to-send effective config.
    struct Effective: Sendable {
        var body: [UInt8]
        var etag: String
        var version: Int
        /// `ETag`, `Cache-Control` and `X-Config-Version`: what the `200` and the `304` carry.
        var headers: [(name: String, value: String)]
        /// The `200` and the `304` in libmicrohttpd's form, built once for
        /// `ConfigFastPath`; `nil` when libmicrohttpd refused them (the ordinary path reports it).
        var prepared: (ok: PreparedResponse, notModified: PreparedResponse)?

        init(body: [UInt8], version: Int, cacheControl: String) {
            self.body = body
            etag = "\"\(FNV1a64.hex(body))\""
            self.version = version
            headers = [("ETag", etag), ("Cache-Control", cacheControl), ("X-Config-Version", String(version))]
            prepared = nil
            if let ok = PreparedResponse(ok), let notModified = PreparedResponse(self.notModified) { prepared = (ok, notModified) }
        }

        var ok: HTTPResponse {
            HTTPResponse(status: 200, headers: [("Content-Type", "application/json; charset=utf-8")] + headers, body: body)
        }

        var notModified: HTTPResponse { HTTPResponse(status: 304, headers: headers) }

        /// `304` when `ifNoneMatch` names this version (RFC 9110 §13.1.2), else `200`.
        func response(ifNoneMatch: String?) -> HTTPResponse {
            guard let ifNoneMatch, ConfigService.matches(ifNoneMatch, etag: etag) else { return ok }
            return notModified
        }
    }

    /// One app's compiled document and its result cache.
    final class Compiled: Sendable {
        struct ResultKey: Hashable {
            var mask: UInt64
            var budgetExceeded: Bool
        }

        let document: ConfigDocument
        /// When a `test_crash_expires_at` passes and the cache must be rebuilt.
        let validUntil: Int64
        /// Rules without a version range.
        let rangeFreeMask: UInt64

        struct Caches {
            /// Per client version, the rules whose version range admits it (comparing versions
            /// allocates; a fleet runs a handful of versions).
            var versionMasks: [String: UInt64] = [:]
            var evaluations: [UInt64: ConfigEvaluation] = [:]
            var results: [ResultKey: Effective] = [:]
        }

        /// One lock for all three, taken twice per request.
        let caches = Locked(Caches())

        /// Which rules match a client.
        func mask(for client: ConfigClient) -> UInt64 {
            guard !document.rules.isEmpty else { return 0 }
            var candidates = rangeFreeMask
            if let version = client.version {
                if let known = caches.withLock({ $0.versionMasks[version] }) {
                    candidates |= known
                } else {
                    var ranged: UInt64 = 0
                    for (index, rule) in document.rules.enumerated() where rule.match.versions?.contains(version) == true {
                        ranged |= 1 << UInt64(index)
                    }
                    caches.withLock { caches in
                        if caches.versionMasks.count > 10_000 { caches.versionMasks.removeAll() }
                        caches.versionMasks[version] = ranged
                    }
                    candidates |= ranged
                }
            }
            var mask: UInt64 = 0
            // Only the candidates' bits, and each rule read in place (not copied out of the array).
            while candidates != 0 {
                let index = candidates.trailingZeroBitCount
                candidates &= candidates - 1
                if document.rules[index].matchesIgnoringVersion(client) { mask |= 1 << UInt64(index) }
            }
            return mask
        }

        init(document: ConfigDocument, now: Int64) {
            self.document = document
            validUntil = ConfigEvaluation.nextExpiry(document, after: now)
            var free: UInt64 = 0
            for (index, rule) in document.rules.enumerated() where rule.match.versions == nil { free |= 1 << UInt64(index) }
            rangeFreeMask = free
        }
    }

    private let store: any TelemetryStore
    private let clock: @Sendable () -> Int64
    /// `Cache-Control` of every effective config, e.g. `private, max-age=60`.
    private let cacheControl: String
    let budget: TestCrashBudget
    private let compiled = Locked<[String: Compiled]>([:])
    private let documents = Locked<[String: ConfigDocument]>([:])
    /// Serializes read-modify-write of documents so concurrent changes don't conflict spuriously.
    private let changeLock = Locked(())

    init(store: any TelemetryStore, clock: @escaping @Sendable () -> Int64, cacheControl: String) throws {
        self.store = store
        self.clock = clock
        self.cacheControl = cacheControl
        budget = TestCrashBudget(store: store, clock: clock)
        let records = try store.configDocuments()
        documents.withLock { documents in
            for record in records { documents[record.app] = ConfigDocument(record: record) }
        }
    }

    /// Takes the versions other nodes saved (a store shared by several `watchdogd`): every app
    /// whose stored document is newer than the one in memory, or only `app` when given.
    /// Returns the apps that changed.
    @discardableResult
    func reloadFromStore(app: String? = nil) throws -> [String] {
        let records = try store.configDocuments().filter { app == nil || $0.app == app }
        return changeLock.withLock { _ in
            var changed: [String] = []
            for record in records where adopt(record) { changed.append(record.app) }
            return changed
        }
    }

    /// Takes a stored document when it is newer than the one in memory; whether it was.
    /// Callers hold `changeLock`.
    private func adopt(_ record: ConfigRecord) -> Bool {
        let known = documents.withLock { $0[record.app]?.version } ?? 0
        guard record.version > known else { return false }
        let document = ConfigDocument(record: record)
        documents.withLock { $0[record.app] = document }
        compiled.withLock { $0[record.app] = Compiled(document: document, now: clock()) }
        return true
    }

    /// The admin document of `app`, or `nil` for an unknown app.
    func document(app: String) throws -> ConfigDocument? {
        if let known = documents.withLock({ $0[app] }) { return known }
        return try store.appExists(app) ? .initial() : nil
    }

    // MARK: - The hot path

    /// The effective config for a client of `app` (and, with `explain`, why each value is what
    /// it is); `nil` for an unknown app.
    func effective(app: String, client: ConfigClient, explain: Bool = false) throws -> (Effective, JSONValue?)? {
        let now = clock()
        guard let compiled = try compiled(app: app, now: now) else { return nil }
        let mask = compiled.mask(for: client)
        let (cachedEvaluation, cachedResult) = compiled.caches.withLock { caches in
            (caches.evaluations[mask], caches.results[Compiled.ResultKey(mask: mask, budgetExceeded: false)])
        }
        let base = cachedEvaluation ?? ConfigEvaluation.evaluate(compiled.document, mask: mask, now: now)
        var evaluation = base
        // Without test_crash on, the budget cannot change anything: the common case is one lookup.
        if !evaluation.testCrashOn, let cachedResult, !explain { return (cachedResult, nil) }
        if evaluation.testCrashOn {
            if let install = client.installID, !install.isEmpty {
                evaluation.applyBudget(crashesToday: budget.crashesToday(app: app, installID: install))
            } else {
                evaluation.refuseWithoutInstall()
            }
        }
        let key = Compiled.ResultKey(mask: mask, budgetExceeded: evaluation.budgetExceeded)
        let fresh = evaluation
        let effective = compiled.caches.withLock { caches -> Effective in
            if cachedEvaluation == nil { caches.evaluations[mask] = base }
            if let cached = caches.results[key] { return cached }
            let made = Effective(body: fresh.body, version: compiled.document.version, cacheControl: cacheControl)
            caches.results[key] = made
            return made
        }
        return (effective, explain ? evaluation.explanation(compiled.document) : nil)
    }

    /// The effective config for a client when it is ready in memory and the same for every
    /// install the client's rules match: the app's document compiled and current, this rule
    /// set evaluated before, and `test_crash` off (with it on, each install's crash budget
    /// decides). Otherwise `nil`, and `effective` computes it. Never reads the store.
    func ready(app: String, client: ConfigClient) -> Effective? {
        guard let compiled = compiled.withLock({ $0[app] }), clock() < compiled.validUntil else { return nil }
        let mask = compiled.mask(for: client)
        return compiled.caches.withLock { caches in
            guard let evaluation = caches.evaluations[mask], !evaluation.testCrashOn else { return nil }
            return caches.results[Compiled.ResultKey(mask: mask, budgetExceeded: false)]
        }
    }

    private func compiled(app: String, now: Int64) throws -> Compiled? {
        if let current = compiled.withLock({ $0[app] }), now < current.validUntil { return current }
        guard let document = try document(app: app) else { return nil }
        let fresh = Compiled(document: document, now: now)
        compiled.withLock { compiled in
            // A change saved meanwhile wins over this (older) compilation.
            if compiled[app] == nil || compiled[app]!.document.version <= document.version { compiled[app] = fresh }
        }
        return fresh
    }

    // MARK: - Changes

    /// The outcome of a change: the new document (not saved for a dry run) and, for dry runs,
    /// what it would do to recent installs.
    struct Change: Sendable {
        var document: ConfigDocument
        var saved: Bool
        var impact: [ReleaseImpact]?
    }

    /// Applies a JSON merge patch (docs/remote-config.md): top-level config keys change `defaults`; `defaults`
    /// and `rules` address the document itself (RFC 7396: an array, like `rules`, is replaced whole).
    func patch(app: String, patch: JSONValue, ifMatch: String?, actor: String, dryRun: Bool) throws -> Change {
        try change(app: app, ifMatch: ifMatch, actor: actor, dryRun: dryRun) { current throws(APIError) in
            guard case .object(let fields) = patch else {
                throw .badRequest("invalid_shape", "the body must be a JSON object, e.g. {\"test_crash\": true}")
            }
            guard case .object(var content) = current.content, case .object(var defaults)? = content["defaults"] else { return current }
            for key in fields.keys.sorted() {
                let value = fields[key]!
                switch key {
                case "defaults":
                    switch value {
                    case .object(let inner): for (name, new) in inner { defaults[name] = new }
                    case .null: defaults = [:]
                    default: throw .badRequest("invalid_config_value", "defaults must be an object of config keys, got \(value.typeName)")
                    }
                case "rules":
                    content["rules"] = value == .null ? .array([]) : value
                case "version", "updated_at", "updated_by":
                    throw .badRequest("invalid_config_value", "\(key) is assigned by the server; send If-Match with the document's ETag to guard against concurrent changes")
                default:
                    if value != .null { try ConfigSchema.check(key, value, path: key) } else if !ConfigSchema.keyNames.contains(key) {
                        try ConfigSchema.check(key, value, path: key)
                    }
                    defaults[key] = value
                }
            }
            content["defaults"] = .object(defaults)
            let (newDefaults, rules) = try ConfigDocumentReader.document(from: .object(content))
            return ConfigDocument(version: current.version, defaults: newDefaults, rules: rules, updatedAt: current.updatedAt, updatedBy: current.updatedBy)
        }
    }

    /// Replaces the whole document (`PUT`).
    func replace(app: String, document value: JSONValue, ifMatch: String?, actor: String, dryRun: Bool) throws -> Change {
        try change(app: app, ifMatch: ifMatch, actor: actor, dryRun: dryRun) { current throws(APIError) in
            let (defaults, rules) = try ConfigDocumentReader.document(from: value)
            return ConfigDocument(version: current.version, defaults: defaults, rules: rules, updatedAt: current.updatedAt, updatedBy: current.updatedBy)
        }
    }

    /// Makes the content of an earlier version current again, as a new version.
    func rollback(app: String, to version: Int, ifMatch: String?, actor: String, dryRun: Bool) throws -> Change {
        guard let earlier = try store.configChange(app: app, version: version) else {
            throw APIError.notFound("app \(app) has no config version \(version); see GET …/config/history")
        }
        return try change(app: app, ifMatch: ifMatch, actor: actor, dryRun: dryRun) { current throws(APIError) in
            let restored = ConfigDocument(record: ConfigRecord(app: app, version: version, document: earlier.after, updatedAt: 0, updatedBy: ""))
            return ConfigDocument(version: current.version, defaults: restored.defaults, rules: restored.rules, updatedAt: current.updatedAt, updatedBy: current.updatedBy)
        }
    }

    /// Sets one rule's `match.percent` as a new version with `note` in its history (a guarded
    /// rollout's step, by the guard or a person); no version when the rule already has it.
    /// - Throws: 404 when the rule is not in the current document.
    func setRulePercent(app: String, ruleID: String, percent: Double, actor: String, note: String?) throws -> Change {
        try change(app: app, ifMatch: nil, actor: actor, dryRun: false, note: note) { current throws(APIError) in
            guard let index = current.rules.firstIndex(where: { $0.id == ruleID }) else {
                throw .notFound("rule \(ruleID.prefix(64)) is not in the app's current config")
            }
            var next = current
            next.rules[index].match.percent = percent
            return next
        }
    }

    private func change(app: String, ifMatch: String?, actor: String, dryRun: Bool, note: String? = nil,
                        edit: (ConfigDocument) throws(APIError) -> ConfigDocument) throws -> Change {
        try changeLock.withLock { _ in
            guard let current = try document(app: app) else {
                throw APIError.notFound("no app \(app); create it with POST /v1/admin/apps")
            }
            if let ifMatch, !Self.matches(ifMatch, etag: current.etag) {
                throw APIError(status: 409, code: "stale_config",
                               message: "If-Match \(ifMatch.prefix(40)) is not the current version \(current.etag); GET the config and apply your change again",
                               headers: [("ETag", current.etag)])
            }
            var next = try edit(current)
            let changed = next.content != current.content
            if changed {
                next.version = current.version + 1
                next.updatedAt = clock()
                next.updatedBy = actor
            }
            if dryRun {
                return Change(document: next, saved: false, impact: try impact(app: app, before: current, after: next))
            }
            guard changed else { return Change(document: current, saved: false, impact: nil) }
            // The audit row of the change (when it is one), written with the version.
            AuditNote.set(beforeJSON: current.version == 0 ? nil : current.storedJSON, afterJSON: next.storedJSON)
            do {
                try store.saveConfig(
                    ConfigRecord(app: app, version: next.version, document: next.storedJSON, updatedAt: next.updatedAt ?? 0, updatedBy: actor, note: note),
                    expectedVersion: current.version, before: current.version == 0 ? nil : current.storedJSON
                )
            } catch StoreError.conflict(let stored) {
                // Another node saved first: take its version, so a retry starts from it.
                if let record = try store.configDocuments().first(where: { $0.app == app }) { _ = adopt(record) }
                throw APIError(status: 409, code: "stale_config", message: "the config changed meanwhile (now version \(stored)); GET it and apply your change again")
            }
            let saved = next
            documents.withLock { $0[app] = saved }
            compiled.withLock { $0[app] = Compiled(document: saved, now: clock()) }
            return Change(document: saved, saved: true, impact: nil)
        }
    }

    // MARK: - Dry-run impact

    /// How many installs seen in the last 7 days, per release, a document change would switch.
    struct ReleaseImpact: Sendable, Encodable {
        var release: String
        var recentInstalls: Int
        /// Installs whose effective config would differ.
        var switched: Int
        /// Per key, how many installs would see it change.
        var keys: [String: Int]

        enum CodingKeys: String, CodingKey {
            case release, switched, keys
            case recentInstalls = "recent_installs"
        }
    }

    static let impactWindowMilliseconds: Int64 = 7 * 86_400_000

    private func impact(app: String, before: ConfigDocument, after: ConfigDocument) throws -> [ReleaseImpact] {
        let now = clock()
        let installs = try store.recentInstalls(app: app, since: now - Self.impactWindowMilliseconds, limit: 200_000)
        var byRelease: [ReleaseID: ReleaseImpact] = [:]
        for install in installs {
            let client = ConfigClient(version: install.release.version, build: install.release.build, channel: install.channel,
                                      idiom: install.idiom, installID: install.installID)
            let old = ConfigEvaluation.evaluate(before, mask: ConfigEvaluation.mask(before, client: client), now: now)
            let new = ConfigEvaluation.evaluate(after, mask: ConfigEvaluation.mask(after, client: client), now: now)
            var entry = byRelease[install.release] ?? ReleaseImpact(release: install.release.text, recentInstalls: 0, switched: 0, keys: [:])
            entry.recentInstalls += 1
            let differing = Set(old.values.keys).union(new.values.keys).filter { old.values[$0] != new.values[$0] }
            if !differing.isEmpty { entry.switched += 1 }
            for key in differing { entry.keys[key, default: 0] += 1 }
            byRelease[install.release] = entry
        }
        return ReleaseOrder.sorted(Array(byRelease), newestFirst: true, by: \.key).map(\.value)
    }

    // MARK: - Helpers

    /// `If-Match` / `If-None-Match` list matching (RFC 9110 §13.1), weak comparison.
    static func matches(_ header: String, etag: String) -> Bool {
        // The usual case, on every poll of a fleet: the client sends back the ETag it was given.
        if header == etag { return true }
        let wanted = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        for candidate in header.split(separator: ",") {
            var tag = candidate.trimmingCharacters(in: " \t")
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if tag == wanted { return true }
        }
        return false
    }
}
