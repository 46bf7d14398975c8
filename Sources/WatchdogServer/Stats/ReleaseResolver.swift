import WatchdogStore

/// Turns a release parameter into one release of the app. Any version and build that ingest
/// accepts can be named, unambiguously, by one of:
///
/// - the release's `id` from `/releases` (`r` + hex of `version \n build`): always unique;
/// - its display text `VERSION (BUILD)`, compared whole against every release's display text,
///   so builds with `(`, `)`, spaces, quotes, `%`, `/` or non-ASCII need no parsing;
/// - a version alone, when the app has one build of it.
struct ReleaseResolver {
    let releases: [ReleaseStats]

    func resolve(_ text: String, parameter: String) throws(APIError) -> ReleaseStats {
        let byID = text.hasPrefix("r") ? releases.first(where: { $0.release.id == text }) : nil
        let exact = releases.filter { $0.release.text == text }
        let byVersion = releases.filter { $0.release.version == text }
        if let byID {
            // A version spelt like another release's id: say so rather than pick one.
            guard (exact + byVersion).allSatisfy({ $0.release == byID.release }) else {
                throw .badRequest("ambiguous_release", "\(parameter)=\(text.prefix(200)) is a release id and also names another release; use that release's VERSION (BUILD)")
            }
            return byID
        }
        if exact.count == 1 { return exact[0] }
        if exact.count > 1 {
            throw .badRequest("ambiguous_release", "\(parameter)=\(text.prefix(200)) names several releases; use one of their ids: \(exact.map(\.release.id).joined(separator: ", "))")
        }
        if byVersion.count == 1 { return byVersion[0] }
        if byVersion.count > 1 {
            let builds = byVersion.map(\.release.build).sorted().joined(separator: ", ")
            throw .badRequest("ambiguous_release", "\(parameter)=\(text.prefix(64)) has several builds (\(builds.prefix(400))); use \(text.prefix(64)) (BUILD) or the release id from /releases")
        }
        throw .notFound("\(parameter)=\(text.prefix(200)) matches no release of this app; use the release's id or its VERSION (BUILD) text as listed by /releases")
    }
}

extension ReleaseID {
    /// How a release is shown: `14.2.0 (31245)`.
    public var text: String { "\(version) (\(build))" }

    /// The opaque, URL-safe id of a release: `r` + lowercase hex of `version \n build` (neither
    /// may hold a control character, so the pair is recovered exactly).
    public var id: String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = [UInt8(ascii: "r")]
        for byte in Array(version.utf8) + [0x0A] + Array(build.utf8) {
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// The releases of an app and the store, shared by the stats routes.
struct ReleaseLookup: Sendable {
    let store: any TelemetryStore
    /// Each app's admission settings (the shares behind `unreliable`).
    let admission: AdmissionService
    private let concentrations = ReleaseStateCache<InstallConcentration>()
    private let networkSides = ReleaseStateCache<NetworkSide>()
    private let installSides = ReleaseStateCache<NetworkSide>()

    /// A release's stats with its concentration filled in.
    func withConcentration(_ release: ReleaseStats, of app: String) throws(APIError) -> ReleaseStats {
        var release = release
        release.concentration = try storeCall { try concentrations.value(app: app, release: release) { try store.concentration(app: app, release: release.release) } }
        return release
    }

    /// A release's overall design effect of clustering by network (all kinds together).
    func designEffect(_ release: ReleaseStats, of app: String) throws(APIError) -> Double {
        try networkSide(release, of: app).overall.designEffect
    }

    /// A release as networks of installs (`NetworkWeighting`), its sessions without an install
    /// id one network — or by install, unbounded, when the app does not weigh by network:
    /// computed once per state of the release.
    func networkSide(_ release: ReleaseStats, of app: String) throws(APIError) -> NetworkSide {
        let byNetwork = weighsByNetwork(app)
        return try storeCall {
            try (byNetwork ? networkSides : installSides).value(app: app, release: release) {
                NetworkSide(try store.installs(app: app, release: release.release), total: (release.sessions, release.affectedSessions), byNetwork: byNetwork)
            }
        }
    }

    /// The app's `weigh_by_network`.
    func weighsByNetwork(_ app: String) -> Bool { admission.settings(app: app).weighByNetwork }

    /// Forgets what the caches hold of a release (it was deleted).
    func forget(_ release: ReleaseID, of app: String) {
        concentrations.forget(app: app, release: release)
        networkSides.forget(app: app, release: release)
        installSides.forget(app: app, release: release)
    }

    /// Every release of the app; 404 when there is no such app.
    func releases(of app: String) throws(APIError) -> [ReleaseStats] {
        guard let releases = try storeCall({ try store.releases(app: app) }) else { throw .notFound("no app \(app)") }
        return releases
    }

    /// The release a parameter names, `nil` when the parameter is absent.
    func release(_ query: [String: String], _ parameter: String, of app: String) throws(APIError) -> ReleaseStats? {
        guard let text = query[parameter] else { return nil }
        return try ReleaseResolver(releases: releases(of: app)).resolve(text, parameter: parameter)
    }

    /// `offset=`: a whole number within 0…10,000,000 (0 when absent).
    static func offset(_ text: String?) throws(APIError) -> Int {
        guard let text else { return 0 }
        guard let offset = Int(text), (0...10_000_000).contains(offset) else {
            throw .badRequest("invalid_parameter", "offset must be a whole number from 0 to 10000000, got \(text.prefix(20))")
        }
        return offset
    }

    /// `limit=`: a whole number within 1…maximum.
    static func limit(_ text: String?, default value: Int, maximum: Int) throws(APIError) -> Int {
        guard let text else { return value }
        guard let limit = Int(text), (1...maximum).contains(limit) else {
            throw .badRequest("invalid_parameter", "limit must be a whole number from 1 to \(maximum), got \(text.prefix(20))")
        }
        return limit
    }
}

