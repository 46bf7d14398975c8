import CBuildInfo

/// What `watchdogd --version` prints: the release and the commit it was built from.
enum BuildInfo {
    /// The release; deploy/deb/build.sh names the package after it (from `watchdogd --version`).
    static let version = "0.1.0"

    /// The commit, as `swift build` was told (deploy/deb/build.sh passes `git rev-parse HEAD`).
    static var commit: String { String(cString: watchdog_build_commit()) }

    static var description: String { "\(version) (commit \(commit))" }
}
