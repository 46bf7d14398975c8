import WatchdogWire

/// What `GET /v1/config` asks for, checked: the app and the client the config is computed for.
/// One reading of the query for the router's path and `ConfigFastPath`.
struct ConfigQuery {
    /// The query arguments read, in the order `init(arguments:principal:)` takes them.
    static let argumentNames: [StaticString] = ["app", "version", "build", "channel", "idiom", "install_id"]

    var app: String
    var client: ConfigClient

    /// `arguments`: the values of `argumentNames`, in that order (values after those are not read).
    init(arguments: [String?], principal: Principal) throws(APIError) {
        guard let app = arguments[0], !app.isEmpty else {
            throw .badRequest("missing_parameter", "app is required: /v1/config?app=<bundle id>&version=&build=&channel=&idiom=&install_id=")
        }
        for index in Self.argumentNames.indices {
            // Characters, as the OpenAPI maxLength counts them (never more than the UTF-8 bytes,
            // which are counted without walking the string).
            let limit = index == 0 ? Limits.appLength : Limits.idLength
            if let value = arguments[index], value.utf8.count > limit, value.unicodeScalars.count > limit {
                throw .badRequest("invalid_parameter", "\(Self.argumentNames[index]) is longer than allowed")
            }
        }
        if principal.role == .ingest, principal.app != app {
            throw .forbidden("this ingest key reads the config of \(principal.app ?? "its app") only")
        }
        // A token limited to other apps: as `AppScope.query` answers it (the fast path of
        // `GET /v1/config` does not pass through the router).
        if principal.role != .ingest, !principal.sees(app) { throw AppScope.hidden(app) }
        self.app = app
        client = ConfigClient(version: arguments[1], build: arguments[2], channel: arguments[3], idiom: arguments[4], installID: arguments[5])
    }
}
