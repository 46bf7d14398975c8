import WatchdogStore

/// Which of an app's listed releases are the ones people meant (docs/release-health.md, "Baselines"): a
/// release an admin or CI *declared*, or one whose counted session starts come from a
/// comparable number of distinct networks (IPv4 /24, IPv6 /48). A holder of the public ingest
/// key can get a release listed from a handful of networks (5 installs on 3); it cannot give it
/// the reach of a real beta without as many networks of its own. So such a release is never a
/// default base (`predecessor`), never pushes a real one out of the releases alerts watch,
/// and never stands in a rollout's evidence (`watched`).
struct ReleaseReach: Sendable {
    /// Distinct networks with counted session starts, per listed release (absent: none known).
    var networks: [ReleaseID: Int]
    /// The app's declared releases.
    var declared: Set<ReleaseID>
    /// `minimum_reach_share` of the app's admission settings.
    var share: Double

    /// The reach of the app's listed releases, as the store has it now.
    static func of(app: String, lookup: ReleaseLookup) throws(APIError) -> ReleaseReach {
        let store = lookup.store
        let networks = try storeCall { try store.listedReleaseNetworks(app: app) }
        let declared = try storeCall { try store.releaseAdmissions(app: app) }.filter { $0.state == .declared }.map(\.release)
        return ReleaseReach(networks: networks, declared: Set(declared), share: lookup.admission.settings(app: app).minimumReachShare)
    }

    func networks(of release: ReleaseID) -> Int { networks[release] ?? 0 }

    /// Whether `release` reaches `share` of `widest` networks (every release does when no
    /// network is known: data made in-process, or copied from before networks were kept).
    func reaches(_ release: ReleaseID, _ widest: Int) -> Bool {
        Double(networks(of: release)) >= share * Double(widest)
    }

    /// The base a release is compared against when none is named (the gate, `compare`,
    /// `release_regressed`): where the app declares releases, the previous declared one with
    /// sessions; otherwise — or when none is older — the previous listed release with
    /// sessions whose networks reach `share` of the target's. `releases` in any order.
    func predecessor(of target: ReleaseID, in releases: [ReleaseStats]) -> ReleaseStats? {
        let older = releases.filter { $0.sessions > 0 && ReleaseOrder.isOlder($0.release, target) }
        func newest(_ candidates: [ReleaseStats]) -> ReleaseStats? { candidates.max { ReleaseOrder.isOlder($0.release, $1.release) } }
        if !declared.isEmpty, let base = newest(older.filter { declared.contains($0.release) }) { return base }
        let widest = networks(of: target)
        return newest(older.filter { reaches($0.release, widest) })
    }

    /// `predecessor(of:in:)` for a caller that already holds the releases older than `target`,
    /// newest first (`ReleaseOrder.sorted(_:newestFirst:by:)`): the first that qualifies, without
    /// comparing every version again (`/v1/metrics/releases` asks for ten releases of one
    /// list): only the candidates up to the first that qualifies are compared with `target`
    /// (one of equal precedence, `14.2` beside `14.2.0` of the same build, is not older).
    func predecessor(of target: ReleaseID, amongOlderNewestFirst older: ArraySlice<ReleaseStats>) -> ReleaseStats? {
        func first(_ qualifies: (ReleaseStats) -> Bool) -> ReleaseStats? {
            older.first { $0.sessions > 0 && qualifies($0) && ReleaseOrder.isOlder($0.release, target) }
        }
        if !declared.isEmpty, let base = first({ declared.contains($0.release) }) { return base }
        let widest = networks(of: target)
        return first { reaches($0.release, widest) }
    }

    /// A release is watched while its newest session or report is at most this old, counted
    /// back from now or from the app's newest data if that is earlier (so an app that went
    /// quiet keeps its last week watched, and clock skew cannot hide a release). Seven days:
    /// a beta build is tested for days, not months; one untouched for a week has nothing new
    /// to alert about, and its firing stays as it is.
    static let recentMilliseconds: Int64 = 7 * 86_400_000
    /// At most this many recent releases are watched: a bound on a pass's cost.
    static let releasesWatched = 20

    /// The releases alert rules and rollout guards look at: those with sessions recently
    /// (`recentMilliseconds`) that are declared or reach `share` of the networks of the widest
    /// of them; past `releasesWatched`, declared ones first, then the most networks (then
    /// sessions) — so releases invented from a few networks neither take a real one's place
    /// nor stand in its evidence, whatever their versions or session counts. Oldest first.
    func watched(_ releases: [ReleaseStats], now: Int64) -> [ReleaseStats] {
        let withSessions = releases.filter { $0.sessions > 0 }
        let newest = min(now, withSessions.map(\.lastSeen).max() ?? now)
        let recent = withSessions.filter { $0.lastSeen >= newest - Self.recentMilliseconds }
        let widest = recent.map { networks(of: $0.release) }.max() ?? 0
        let comparable = recent.filter { declared.contains($0.release) || reaches($0.release, widest) }
        let kept = comparable.count <= Self.releasesWatched ? comparable : Array(comparable.sorted {
            (declared.contains($0.release) ? 1 : 0, networks(of: $0.release), $0.sessions, $0.lastSeen)
                > (declared.contains($1.release) ? 1 : 0, networks(of: $1.release), $1.sessions, $1.lastSeen)
        }.prefix(Self.releasesWatched))
        return kept.sorted { ReleaseOrder.isOlder($0.release, $1.release) }
    }
}
