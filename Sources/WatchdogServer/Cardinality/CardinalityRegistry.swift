import Locking
import WatchdogStore
import WatchdogWire

/// The values each app and release has been admitted with, per capped dimension, and the
/// folding of those past a cap (`CardinalityLimits`), on the ingest threads before a batch is
/// queued: the roll-ups then only ever see admitted values and `Folded`'s, so their rows per
/// release stay bounded however many distinct values clients send.
///
/// A scope (an app's kinds, a release's screens or channels, …) is read from the store the
/// first time a report needs it — its values the most reported first, at most the cap — and
/// then kept up to date as reports are folded. Values are kept as the process's seeded `Hasher` values, not
/// text, so a full release costs a few KiB; a client cannot aim collisions at a seed it does
/// not know, and an accidental one only lets one more value through.
///
/// Several nodes on one PostgreSQL store each keep their own registry: two nodes that meet a
/// scope before either has written to it can each admit up to the cap, so the store holds at
/// most `nodes × cap` distinct values of a scope (and the read side cuts every breakdown to
/// its top values anyway, `BreakdownCut`). A value admitted on one node may be folded on
/// another that had already filled the scope: it then counts partly under its own name.
final class CardinalityRegistry: Sendable {
    enum Dimension: Int, CaseIterable { case screen, view, deviceModel, inputMode, channel }

    private struct ReleaseKey: Hashable {
        var app: String
        var release: ReleaseID

        init(_ report: ReportRecord) {
            app = report.app
            release = ReleaseID(version: report.version, build: report.build)
        }

        /// The release of `report` (without hashing).
        func `is`(_ report: ReportRecord) -> Bool {
            release.version == report.version && release.build == report.build && app == report.app
        }
    }

    private struct Scope {
        var values: Set<Int>
        var cap: Int

        init(_ values: [String], cap: Int) {
            self.values = Set(values.lazy.filter { $0 != Folded.value && $0 != Folded.kind }.prefix(cap).map(\.hashValue))
            self.cap = cap
        }

        /// Whether `value` is admitted (already, or now while there is room).
        mutating func admits(_ value: String) -> Bool {
            // A client's own `x-other` or `(other)` is counted with the folded values.
            if value == Folded.kind || value == Folded.value { return true }
            let hash = value.hashValue
            if values.contains(hash) { return true }
            guard values.count < cap else { return false }
            values.insert(hash)
            return true
        }
    }

    private struct ReleaseScopes {
        var scopes: [Scope]
        var lastUse: UInt64
    }

    private struct State {
        var kinds: [String: Scope] = [:]
        var releases: [ReleaseKey: ReleaseScopes] = [:]
        var tick: UInt64 = 0
    }

    let limits: CardinalityLimits
    private let store: any TelemetryStore
    private let state = Locked(State())

    init(store: any TelemetryStore, limits: CardinalityLimits = CardinalityLimits()) {
        self.store = store
        self.limits = limits
    }

    /// Folds the capped values of `reports` past their caps and recomputes their fingerprints.
    /// A scope the store cannot be read for is treated as full and not remembered: its new
    /// values are folded (the batch's commit will most likely fail too), the next batch reads
    /// it again.
    func fold(_ reports: inout [ReportRecord]) {
        let apps = Set(reports.lazy.filter { !Vocabulary.isBuiltInKind($0.kind) }.map(\.app))
        var releases: Set<ReleaseKey> = []
        var previous: ReleaseKey?
        for report in reports where Self.hasReleaseValues(report) {
            // A batch is mostly one release: hash its key once.
            guard previous.map({ !$0.is(report) }) ?? true else { continue }
            let key = ReleaseKey(report)
            previous = key
            releases.insert(key)
        }
        guard !apps.isEmpty || !releases.isEmpty else { return }
        var unreadable: Set<ReleaseKey> = []
        // Store reads happen outside the lock, for the scopes not in memory. Another batch can
        // make room by forgetting a release between the read and the fold: it is read again.
        for attempt in 0..<3 {
            let (missingApps, missingReleases) = state.withLock { state in
                (apps.filter { state.kinds[$0] == nil }, releases.subtracting(unreadable).filter { state.releases[$0] == nil })
            }
            var kindSeeds: [String: Scope] = [:], releaseSeeds: [ReleaseKey: [Scope]] = [:]
            for app in missingApps {
                if let kinds = try? store.customKinds(app: app, limit: limits.customKindsPerApp + 1) { kindSeeds[app] = Scope(kinds, cap: limits.customKindsPerApp) }
            }
            for key in missingReleases {
                if let values = try? store.releaseValues(app: key.app, release: key.release, limit: limits.largestReleaseCap + 1) {
                    releaseSeeds[key] = scopes(values)
                } else {
                    unreadable.insert(key)
                }
            }
            let folded = state.withLock { state -> Bool in
                state.tick += 1
                let now = state.tick
                for (app, scope) in kindSeeds where state.kinds[app] == nil { state.kinds[app] = scope }
                for key in releases.subtracting(unreadable) {
                    if state.releases[key] != nil {
                        state.releases[key]?.lastUse = now
                    } else if let seeded = releaseSeeds[key] {
                        state.releases[key] = ReleaseScopes(scopes: seeded, lastUse: now)
                    } else if attempt < 2 {
                        return false
                    }
                }
                // Only releases this batch does not use are forgotten.
                while state.releases.count > limits.releasesInMemory,
                      let oldest = state.releases.min(by: { $0.value.lastUse < $1.value.lastUse }), oldest.value.lastUse < now {
                    state.releases[oldest.key] = nil
                }
                var current: (key: ReleaseKey, index: Dictionary<ReleaseKey, ReleaseScopes>.Index?)?
                for index in reports.indices {
                    if Self.hasReleaseValues(reports[index]), !(current?.key.is(reports[index]) ?? false) {
                        let key = ReleaseKey(reports[index])
                        current = (key, state.releases.index(forKey: key))
                    }
                    fold(&reports[index], state: &state, release: current?.index)
                }
                return true
            }
            if folded { return }
        }
    }

    /// Folds one report by the scopes in memory (its release's at `release`); a scope that is
    /// not (unreadable) is full.
    private func fold(_ report: inout ReportRecord, state: inout State, release: Dictionary<ReleaseKey, ReleaseScopes>.Index?) {
        var changed = false
        if !Vocabulary.isBuiltInKind(report.kind), state.kinds[report.app]?.admits(report.kind) != true {
            report.kind = Folded.kind
            changed = true
        }
        if Self.hasReleaseValues(report) {
            func capped(_ value: String?, _ dimension: Dimension) -> String? {
                guard let value, let release else { return value == nil ? nil : Folded.value }
                return state.releases.values[release].scopes[dimension.rawValue].admits(value) ? value : Folded.value
            }
            let screen = capped(report.screen, .screen), view = capped(report.viewName, .view)
            if screen != report.screen || view != report.viewName {
                report.screen = screen
                report.viewName = view
                changed = true
            }
            if report.keyboardHeight != nil {
                report.deviceModel = capped(report.deviceModel, .deviceModel)
                report.inputMode = capped(report.inputMode, .inputMode)
            }
            // Not in the fingerprint: the channel is only what the report is stored and rolled up with.
            report.channel = capped(report.channel, .channel)
        }
        if changed { report.refingerprint() }
    }

    /// Whether a report carries a value of a per-release capped dimension. Model and input
    /// mode are only kept with a keyboard height (the histogram), so only then are they capped.
    private static func hasReleaseValues(_ report: ReportRecord) -> Bool {
        report.screen != nil || report.viewName != nil || report.channel != nil
            || (report.keyboardHeight != nil && (report.deviceModel != nil || report.inputMode != nil))
    }

    private func scopes(_ values: ReleaseValues) -> [Scope] {
        [Scope(values.screens, cap: limits.screensPerRelease), Scope(values.views, cap: limits.viewsPerRelease),
         Scope(values.deviceModels, cap: limits.deviceModelsPerRelease), Scope(values.inputModes, cap: limits.inputModesPerRelease),
         Scope(values.channels, cap: limits.channelsPerRelease)]
    }

    /// Releases whose values are in memory now (for tests of the bound).
    var releasesInMemory: Int { state.withLock { $0.releases.count } }
}

extension ReportRecord {
    /// The fingerprint of the (possibly folded) kind, screen, view and keyboard mode.
    mutating func refingerprint() {
        fingerprint = Fingerprint.of(kind: kind, screen: screen, viewName: viewName, keyboardMode: keyboardMode)
    }
}
