import Foundation
import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// Release admission for admins (docs/release-health.md, "Releases: declared, admitted, unlisted"): declaring a
/// release from CI, the listed and unlisted releases, admitting, unlisting and deleting one,
/// and the app's admission settings.
struct AdmissionRoutes: Sendable {
    let store: any TelemetryStore
    let lookup: ReleaseLookup
    let admission: AdmissionService
    let unlisted: UnlistedTotals
    let clock: @Sendable () -> Int64

    /// Unlisted releases per page of `GET …/releases`.
    static let defaultPage = 50
    static let maximumPage = 500

    /// `POST /v1/admin/apps/{app}/releases {"version": …, "build": …}`: declares a release
    /// (listed now, and under `strict` the only way to be); 201 when newly declared, 200 when
    /// it already was.
    func declare(_ request: HTTPRequest, app: String, principal: Principal) throws(APIError) -> HTTPResponse {
        guard case .object(let fields)? = JSONValue.parse(request.body), case .string(let version)? = fields["version"],
              case .string(let build)? = fields["build"] else {
            throw .badRequest("invalid_shape", "the body must be {\"version\": \"14.2.0\", \"build\": \"31245\"}, both strings")
        }
        for key in fields.keys where key != "version" && key != "build" {
            throw .badRequest("invalid_field", "\(key.prefix(40)) is not a field; only version and build")
        }
        do { try ReportValidator.checkRelease(version: version, build: build) } catch { throw .from(error) }
        let release = ReleaseID(version: version, build: build)
        let before = try storeCall { try store.releaseAdmissions(app: app) }.first { $0.release == release }
        let declaration = ReleaseAdmission(app: app, release: release, state: .declared, by: principal.name, at: clock(), reason: "declared")
        do {
            _ = try store.admitRelease(declaration)
        } catch StoreError.unknownApp {
            throw .notFound("no app \(app)")
        } catch {
            throw .unavailable("the store could not save the declaration; retry later")
        }
        unlisted.forget(app: app)
        if let before, before.state == .declared { return JSONBody.response(ListedReleaseView.of(before, stats: nil)) }
        return JSONBody.response(status: 201, ListedReleaseView.of(declaration, stats: nil))
    }

    /// `GET /v1/admin/apps/{app}/releases?offset=&limit=`: every listed release, and the
    /// unlisted ones' totals with one page of them (most session starts first). The page is a
    /// pass over every unlisted release: it is read on `UnlistedTotals.queue`, one at a time,
    /// and answered from there, holding none of the HTTP server's threads.
    func list(_ request: HTTPRequest, app: String) throws(APIError) -> Response {
        let limit = try ReleaseLookup.limit(request.query["limit"], default: Self.defaultPage, maximum: Self.maximumPage)
        let offset = try ReleaseLookup.offset(request.query["offset"])
        let pending = PendingResponse()
        unlisted.queue.async { [self] in
            do throws(APIError) {
                let stats = try lookup.releases(of: app)
                let byRelease = Dictionary(stats.map { ($0.release, $0) }, uniquingKeysWith: { first, _ in first })
                let listed = try storeCall { try store.releaseAdmissions(app: app) }
                let page = try storeCall { try store.unlistedReleases(app: app, offset: offset, limit: limit) }
                unlisted.store(page, app: app)
                pending.respond(JSONBody.response(AdmissionListView(
                    app: app, listed: listed.map { ListedReleaseView.of($0, stats: byRelease[$0.release]) },
                    unlisted: UnlistedPageView(page, offset: offset, limit: limit))))
            } catch {
                pending.respond(error.response)
            }
        }
        return .later(pending)
    }

    /// `POST …/releases/{release}/admit`: lists an unlisted release, as an admin's decision.
    func admit(app: String, release text: String, principal: Principal) throws(APIError) -> HTTPResponse {
        let release = try ReleaseParameter(store: store, app: app).resolve(text)
        let admission = ReleaseAdmission(app: app, release: release, state: .admitted, by: principal.name, at: clock(), reason: "admitted by an admin")
        _ = try storeCall { try store.admitRelease(admission) }
        unlisted.forget(app: app)
        let now = try storeCall { try store.releaseAdmissions(app: app) }.first { $0.release == release } ?? admission
        return JSONBody.response(ListedReleaseView.of(now, stats: nil))
    }

    /// `DELETE …/releases/{release}/listing`: takes a release off the list; its data stays,
    /// unlisted. Under `auto`, its next session start lists it again if it still has the installs
    /// and networks: delete it, or use `strict`, to keep it off.
    func unlist(app: String, release text: String) throws(APIError) -> HTTPResponse {
        let release = try ReleaseParameter(store: store, app: app).resolve(text)
        guard try storeCall({ try store.unlistRelease(app: app, release: release) }) else {
            throw .notFound("\(release.text) of \(app) is not listed")
        }
        unlisted.forget(app: app)
        return JSONBody.response(ReleaseRefView(release: release))
    }

    /// `DELETE …/releases/{release}?confirm=…`: deletes a release, listed or not, with all its
    /// data; `confirm` must repeat the release's `VERSION (BUILD)` text or its id (absent: 400
    /// `confirmation_required`; naming something else: 409 `confirmation_mismatch`).
    func delete(_ request: HTTPRequest, app: String, release text: String) throws(APIError) -> HTTPResponse {
        let release = try ReleaseParameter(store: store, app: app).resolve(text)
        let confirm = request.query["confirm"]
        guard confirm == release.text || confirm == release.id else {
            let stats = try storeCall { try store.releaseDetail(app: app, release: release) }?.stats
            let held = stats.map { "its \($0.sessions + $0.implausibleSessions) session starts and \($0.allReports) reports" } ?? "its listing (it has no data)"
            let message = "deleting \(release.text) of \(app) removes \(held) for good; "
                + "repeat the request with ?confirm= and the release's VERSION (BUILD) text or its id \(release.id)"
            guard confirm == nil else { throw APIError(status: 409, code: "confirmation_mismatch", message: "confirm= names another release: " + message) }
            throw .badRequest("confirmation_required", message)
        }
        let rows = try storeCall { try store.deleteRelease(app: app, release: release) }
        lookup.forget(release, of: app)
        unlisted.forget(app: app)
        return JSONBody.response(DeletedReleaseView(release: release, deletedRows: rows))
    }

    /// `GET /v1/admin/apps/{app}/admission`: the settings in force (the defaults when none saved).
    func settings(app: String) throws(APIError) -> HTTPResponse {
        guard try storeCall({ try store.appExists(app) }) else { throw .notFound("no app \(app)") }
        let stored = try storeCall { try store.admissionSettings(app: app) }
        return JSONBody.response(stored.flatMap(AdmissionSettings.decoded) ?? AdmissionSettings())
    }

    /// `PUT /v1/admin/apps/{app}/admission`: the whole settings document (a field left out
    /// takes its default); applies to the next request on this node, within 10 s on others.
    func saveSettings(_ request: HTTPRequest, app: String) throws(APIError) -> HTTPResponse {
        guard case .object(let fields)? = JSONValue.parse(request.body) else {
            throw .badRequest("invalid_json", "the body must be the admission settings, e.g. {\"mode\": \"strict\"}")
        }
        let known = Set(AdmissionSettings.CodingKeys.allCases.map(\.rawValue))
        for key in fields.keys.sorted() where !known.contains(key) {
            throw .badRequest("invalid_field", "\(key.prefix(40)) is not a setting; the settings are \(known.sorted().joined(separator: ", "))")
        }
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) where value == .null {
            throw .badRequest("invalid_field", "\(key) must not be null; leave it out for its default")
        }
        let settings: AdmissionSettings
        do {
            settings = try JSONDecoder().decode(AdmissionSettings.self, from: Data(request.body))
        } catch {
            throw .badRequest("invalid_field", "the settings must be numbers (shares from 0 to 1) and mode a string: \(String(describing: error).prefix(300))")
        }
        try admission.save(app: app, settings)
        return JSONBody.response(settings)
    }
}
