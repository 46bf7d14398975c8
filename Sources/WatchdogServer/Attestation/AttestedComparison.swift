import WatchdogHTTP
import WatchdogStore

/// `installs=attested` on `compare` and `cohorts` (docs/security.md, "Attested installs"): the same
/// comparison over the sessions whose start carried the assertion of their install's owning
/// App Attest key only, from the per-install roll-ups (`release_installs`), so neither an
/// install id a client merely claimed nor the history of one before its key counts.
enum InstallFilter: Sendable, Equatable {
    case all
    case attested(Set<String>)

    /// `installs=` of a request: absent or `all`, or `attested` (the app's attested installs).
    static func of(_ request: HTTPRequest, app: String, attestation: AttestationService) throws(APIError) -> InstallFilter {
        switch request.query["installs"] {
        case nil, "all": return .all
        case "attested": return .attested(try attestation.installs(app: app))
        case let other?: throw .badRequest("invalid_parameter", "installs must be all or attested, got \"\(other.prefix(32))\"")
        }
    }

    /// The part of `install` this filter counts: all of it, or its attested sessions (those
    /// whose start carried its owning key's assertion), `nil` when it has none.
    func counted(_ install: InstallRow) -> InstallRow? {
        switch self {
        case .all: return install
        case .attested(let installs):
            guard installs.contains(install.installID), install.attestedSessions > 0 else { return nil }
            var attested = install
            attested.sessions = install.attestedSessions
            attested.affectedSessions = install.attestedAffectedSessions
            attested.kinds = install.kinds.mapValues { ($0.reports, 0) }.merging(install.attestedKinds.mapValues { (0, $0) }) { ($0.0, $1.1) }
            return attested
        }
    }

    var name: String {
        switch self {
        case .all: "all"
        case .attested: "attested"
        }
    }
}

extension CompareRoutes {
    /// Two releases compared over their attested installs: overall and per kind, as a cohort
    /// comparison is (screen, keyboard-mode and idiom breakdowns are empty: they are not kept
    /// per install). Sessions without an install id, or of an install never attested, are left out.
    static func attestedComparison(_ lookup: ReleaseLookup, app: String, base: ReleaseStats, target: ReleaseStats,
                                   method: IntervalMethod, filter: InstallFilter) throws(APIError) -> CompareView {
        let store = lookup.store
        var baseSide = Cohort(), targetSide = Cohort()
        for install in try storeCall({ try store.installs(app: app, release: base.release) }).compactMap(filter.counted) { baseSide.add(install) }
        for install in try storeCall({ try store.installs(app: app, release: target.release) }).compactMap(filter.counted) { targetSide.add(install) }
        let byNetwork = lookup.weighsByNetwork(app)
        let baseNetworks = baseSide.networks(byNetwork: byNetwork), targetNetworks = targetSide.networks(byNetwork: byNetwork)
        var view = CompareView(
            app: app, intervalMethod: method,
            base: ReleaseSummary(cohort: baseSide, release: base.release, label: "attested installs"),
            target: ReleaseSummary(cohort: targetSide, release: target.release, label: "attested installs"),
            overall: SessionComparison(base: baseSide.side(baseNetworks), target: targetSide.side(targetNetworks), method: method),
            byKind: Cohort.byKind(base: baseSide, baseNetworks, target: targetSide, targetNetworks, method: method),
            byScreen: [], byKeyboardMode: [], byIdiom: [])
        view.installs = filter.name
        if base.partialHistory || target.partialHistory {
            view.overall = view.overall.withheld(SessionComparison.partialHistoryReason)
            view.withholdBreakdowns()
        }
        // Judged over the attested installs themselves: the release's own concentration counts
        // everyone's sessions, and an unattested sender must not turn this verdict unreliable.
        view.assessReliability(base: SessionConcentrationView(installs: baseSide.members), target: SessionConcentrationView(installs: targetSide.members),
                               settings: lookup.admission.settings(app: app))
        return view
    }
}
