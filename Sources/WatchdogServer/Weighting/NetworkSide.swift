import WatchdogStore

/// One side of a comparison — a release, a config cohort of it, or its attested installs — as
/// networks of installs, ready for `NetworkWeighting`: overall, and per kind on demand. An
/// install's network is where its first counted session of the release came from
/// (`InstallRow.network`); one without (made in-process, or stored before networks were kept
/// per install) is a network of its own. The side's sessions without an install id are one
/// network together: they cannot be told apart, so together they weigh as one.
///
/// With `byNetwork` off (the app's `weigh_by_network`, off under `open` admission: testers who
/// all share one office network) each install is its own cluster, each session without an
/// install id one of its own, and nothing is bounded: the design effect of clustering by
/// install, as before network weighting.
struct NetworkSide: Sendable {
    private struct Member: Sendable {
        var sessions: Int
        var affected: Int
        var kinds: [String: Int]
    }

    /// Per network, its members; the side's sessions without an install id are the last
    /// `remainderNetworks` (one network, or one per session when not by network).
    private let networks: [[Member]]
    private let remainderNetworks: Int
    private let weighting: NetworkWeighting.Side
    /// All kinds together.
    let overall: NetworkWeighting.Estimate
    /// Installs with at least one counted session start.
    let installs: Int

    /// A side of `members`, plus the side's totals when it has sessions outside them (a
    /// release's sessions without an install id): `total` of sessions and affected sessions.
    init(_ members: [InstallRow], total: (sessions: Int, affected: Int)? = nil, byNetwork: Bool = true,
         bounds: NetworkWeighting.Bounds = .verdicts) {
        var grouped: [String: [Member]] = [:]
        var order: [String] = []
        var inInstalls = (sessions: 0, affected: 0)
        for install in members where install.sessions > 0 {
            let key = byNetwork ? install.network.map { "n " + $0 } ?? "i " + install.installID : "i " + install.installID
            if grouped[key] == nil { order.append(key) }
            let affected = min(install.affectedSessions, install.sessions)
            grouped[key, default: []].append(Member(sessions: install.sessions, affected: affected,
                                                    kinds: install.kinds.mapValues { min($0.affectedSessions, install.sessions) }))
            inInstalls.sessions += install.sessions
            inInstalls.affected += affected
        }
        var networks = order.map { grouped[$0] ?? [] }
        var remainderNetworks = 0
        if let total, total.sessions > inInstalls.sessions {
            let sessions = total.sessions - inInstalls.sessions
            let affected = min(sessions, max(0, total.affected - inInstalls.affected))
            if byNetwork {
                networks.append([Member(sessions: sessions, affected: affected, kinds: [:])])
                remainderNetworks = 1
            } else {
                networks += (0..<sessions).map { [Member(sessions: 1, affected: $0 < affected ? 1 : 0, kinds: [:])] }
                remainderNetworks = sessions
            }
        }
        self.networks = networks
        self.remainderNetworks = remainderNetworks
        installs = members.count { $0.sessions > 0 }
        weighting = NetworkWeighting.Side(networks: networks.map { $0.map(\.sessions) }, bounds: byNetwork ? bounds : nil)
        overall = weighting.estimate(affected: networks.map { $0.map(\.affected) })
    }

    /// The estimate for one kind; `affected` is the side's sessions with that kind in all
    /// (those outside its installs are the sessions without an install id).
    func kind(_ kind: String, affected total: Int? = nil) -> NetworkWeighting.Estimate {
        let installNetworks = networks.count - remainderNetworks
        var counts = networks.prefix(installNetworks).map { $0.map { $0.kinds[kind] ?? 0 } }
        if remainderNetworks > 0 {
            let inInstalls = counts.reduce(0) { $0 + $1.reduce(0, +) }
            let outside = networks.suffix(remainderNetworks).reduce(0) { $0 + $1.reduce(0) { $0 + $1.sessions } }
            let affected = min(outside, max(0, (total ?? 0) - inInstalls))
            counts += remainderNetworks == 1 ? [[affected]] : (0..<remainderNetworks).map { [$0 < affected ? 1 : 0] }
        }
        return weighting.estimate(affected: counts)
    }
}
