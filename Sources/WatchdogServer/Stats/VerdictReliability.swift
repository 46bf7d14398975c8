import WatchdogStore

/// How concentrated one side's counted session starts are (`compare`, `cohorts`): the share
/// of them from the top 1 % of installs, from the largest network and in the busiest hour.
/// Report concentration (`concentration`) says who sent the glitches; this says who sent the
/// denominator, which a holder of the public ingest key would forge.
struct SessionConcentrationView: Encodable, Equatable {
    var sessions: Int
    var installs: Int
    var topInstalls: Int
    @NullWhenAbsent var topInstallsShare: Double? = nil
    var networks: Int
    @NullWhenAbsent var topNetworkShare: Double? = nil
    @NullWhenAbsent var busiestHourShare: Double? = nil

    init(_ concentration: SessionConcentration) {
        sessions = concentration.sessions
        installs = concentration.installs
        topInstalls = concentration.topInstalls
        networks = concentration.networks
        guard concentration.sessions > 0 else { return }
        let total = Double(concentration.sessions)
        topInstallsShare = Double(concentration.topInstallsSessions) / total
        // Sessions of an unknown network (made in-process, copied from an old data dir) are in
        // no network: the share is of all sessions, so they cannot make one network look big.
        if concentration.networks > 0 { topNetworkShare = Double(concentration.topNetworkSessions) / total }
        busiestHourShare = Double(concentration.busiestHourSessions) / total
    }

    /// A side made of installs — a config cohort, or the attested installs
    /// (`installs=attested`) — judged on its own sessions: how many of them its top 1 % of
    /// installs hold and its largest network (each install's, `InstallRow.network`), from those
    /// installs' own roll-ups, so sessions of installs outside the side (the other cohort's, an
    /// unattested attacker's) cannot move it. The hour of a start is kept per release, not per
    /// install: that share is null and not judged.
    init(installs members: [InstallRow]) {
        let counted = members.filter { $0.sessions > 0 }
        let sizes = counted.map(\.sessions).sorted(by: >)
        sessions = sizes.reduce(0, +)
        installs = sizes.count
        topInstalls = InstallConcentration.topInstalls(among: sizes.count)
        var byNetwork: [String: Int] = [:]
        for install in counted { if let network = install.network { byNetwork[network, default: 0] += install.sessions } }
        networks = byNetwork.count
        guard sessions > 0 else { return }
        topInstallsShare = Double(sizes.prefix(topInstalls).reduce(0, +)) / Double(sessions)
        if let top = byNetwork.values.max() { topNetworkShare = Double(top) / Double(sessions) }
    }

    enum CodingKeys: String, CodingKey {
        case sessions, installs, networks
        case topInstalls = "top_installs"
        case topInstallsShare = "top_installs_share"
        case topNetworkShare = "top_network_share"
        case busiestHourShare = "busiest_hour_share"
    }
}

/// Whether a comparison's verdicts can be acted on. A verdict whose sessions come mostly from
/// a few installs, one network or one hour is `unreliable` — never `improved` or `regressed`
/// on its own — with the reasons, by the app's `AdmissionSettings` shares.
struct VerdictReliability: Encodable, Equatable {
    struct Reason: Encodable, Equatable {
        /// `few_installs`, `one_network` or `one_burst`.
        var code: String
        /// Which side: `base` or `target`.
        var side: String
        var message: String
    }

    var reliable: Bool { reasons.isEmpty }
    var reasons: [Reason]

    enum CodingKeys: String, CodingKey { case reliable, reasons }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(reliable, forKey: .reliable)
        try container.encode(reasons, forKey: .reasons)
    }

    static func assess(base: SessionConcentrationView, target: SessionConcentrationView, settings: AdmissionSettings) -> VerdictReliability {
        var reasons: [Reason] = []
        for (side, view) in [("base", base), ("target", target)] {
            func percent(_ share: Double) -> String { "\(Int((share * 100).rounded())) %" }
            if let share = view.topInstallsShare, share > settings.maximumTopInstallsShare {
                reasons.append(Reason(code: "few_installs", side: side, message: "\(percent(share)) of the \(side)'s sessions come from its top \(view.topInstalls) of \(view.installs) installs"))
            }
            if let share = view.topNetworkShare, share > settings.maximumNetworkShare {
                reasons.append(Reason(code: "one_network", side: side, message: "\(percent(share)) of the \(side)'s sessions come from one network (of \(view.networks))"))
            }
            if let share = view.busiestHourShare, share > settings.maximumHourShare {
                reasons.append(Reason(code: "one_burst", side: side, message: "\(percent(share)) of the \(side)'s sessions started in one hour"))
            }
        }
        return VerdictReliability(reasons: reasons)
    }

    /// The comparison with `improved`/`regressed` turned into `unreliable` when this is not reliable.
    func apply(_ comparison: SessionComparison) -> SessionComparison {
        guard !reliable, let verdict = comparison.verdict, verdict == "improved" || verdict == "regressed" else { return comparison }
        var copy = comparison
        copy.verdict = "unreliable"
        copy.reason = "the interval alone says \(verdict), but its sessions are concentrated: " + reasons.map(\.message).joined(separator: "; ")
        return copy
    }
}
