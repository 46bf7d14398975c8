import Dispatch
import WatchdogStore

extension ReleaseLookup {
    /// What `warm(until:)` did.
    struct WarmUp: Sendable, CustomStringConvertible {
        var apps = 0
        var releases = 0
        /// Every release of every app is warm; otherwise the deadline came first.
        var complete = true
        var milliseconds = 0.0

        var description: String {
            "\(releases) releases of \(apps) apps and their dashboard views in \(Int(milliseconds.rounded())) ms\(complete ? "" : ", stopped at the time limit: the rest are filled by their first request")"
        }
    }

    /// Fills the per-release caches — install concentration and design-effect sums — that the
    /// first `/releases`, `/compare` and `/issues` after a start would otherwise compute while
    /// someone waits (at 1 M reports, 150–300 ms for `/releases` alone). Newest releases first;
    /// stops at `deadline` (uptime nanoseconds). A release the store cannot read is skipped:
    /// its first request reports the error.
    func warm(until deadline: UInt64) -> WarmUp {
        let started = DispatchTime.now().uptimeNanoseconds
        var done = WarmUp()
        apps: for app in (try? store.apps()) ?? [] {
            guard let releases = try? self.releases(of: app.app) else { continue }
            done.apps += 1
            for release in ReleaseOrder.sorted(releases, newestFirst: true, by: \.release) {
                guard DispatchTime.now().uptimeNanoseconds < deadline else {
                    done.complete = false
                    break apps
                }
                _ = try? withConcentration(release, of: app.app)
                _ = try? installClusterSums(release, of: app.app)
                done.releases += 1
            }
        }
        done.milliseconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
        return done
    }
}
