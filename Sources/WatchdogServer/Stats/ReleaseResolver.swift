import WatchdogStore

/// Turns a `release` query value — `14.2.0 (31245)`, or `14.2.0` when that version has one
/// build — into a release of the app.
struct ReleaseResolver {
    let releases: [ReleaseStats]

    func resolve(_ text: String, parameter: String) throws(APIError) -> ReleaseStats {
        let trimmed = text.trimmingCharacters(in: " ")
        var version = trimmed
        var build: String?
        if trimmed.hasSuffix(")"), let open = trimmed.lastIndex(of: "(") {
            version = String(trimmed[..<open]).trimmingCharacters(in: " ")
            build = String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)]).trimmingCharacters(in: " ")
        }
        let matches = releases.filter { $0.release.version == version && (build == nil || $0.release.build == build) }
        if matches.count == 1 { return matches[0] }
        if matches.isEmpty {
            throw .notFound("\(parameter)=\(text.prefix(80)) matches no release of this app; use VERSION (BUILD) as listed by /releases")
        }
        let builds = matches.map(\.release.build).sorted().joined(separator: ", ")
        throw .badRequest("ambiguous_release", "\(parameter)=\(version) has several builds (\(builds)); use \(version) (BUILD)")
    }
}

extension String {
    func trimmingCharacters(in characters: String) -> String {
        self[...].trimmingCharacters(in: characters)
    }
}
