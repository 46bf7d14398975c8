import Dispatch
import WatchdogStore

extension ReleaseLookup {
    /// Fills the per-release caches of `app` — install concentration and the networks of installs —
    /// that the first `/releases`, `/compare` and `/issues` after a start would otherwise
    /// compute while someone waits (at 1 M reports, 150–300 ms for `/releases` alone). Newest
    /// releases first; stops at `deadline` (uptime nanoseconds). A release the store cannot
    /// read is skipped: its first request reports the error. How many releases were warmed,
    /// and whether that was all of them.
    func warm(app: String, until deadline: UInt64) -> (releases: Int, complete: Bool) {
        guard let releases = try? self.releases(of: app) else { return (0, true) }
        var warmed = 0
        for release in ReleaseOrder.sorted(releases, newestFirst: true, by: \.release) {
            guard DispatchTime.now().uptimeNanoseconds < deadline else { return (warmed, false) }
            _ = try? withConcentration(release, of: app)
            _ = try? networkSide(release, of: app)
            warmed += 1
        }
        return (warmed, true)
    }
}
