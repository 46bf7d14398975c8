import Prometheus
import WatchdogStore
import WatchdogWire

/// The series of `GET /v1/metrics/releases`, built in a registry of their own per scrape
/// (swift-prometheus writes the text format and escapes label values: a release's name is
/// client text and stays a quoted label value, never a line of its own).
final class ReleaseMetricsExposition {
    /// Every value `watchdog_release_verdict` takes: one series each, 1 for the release's
    /// verdict and 0 for the others (a Prometheus state set). `none`: no predecessor with
    /// sessions, or no ratio (no affected sessions on either side).
    static let verdicts = ["improved", "no_change", "regressed", "unreliable", "none"]
    /// The label under which an app's own (`x-`) kinds are summed.
    static let customKinds = "x-*"

    private let registry = PrometheusCollectorRegistry()

    /// A release's counts and rates.
    func add(app: String, release stats: ReleaseStats) {
        let labels = [("app", app), ("release", stats.release.text)]
        gauge("watchdog_release_sessions", "Counted session starts of a listed release", labels, Double(stats.sessions))
        gauge("watchdog_release_affected_sessions", "Sessions of a listed release with at least one report while the app was active",
              labels, Double(min(stats.affectedSessions, stats.sessions)))
        if let rate = stats.glitchFreeSessionRate {
            gauge("watchdog_release_glitch_free_ratio", "Share of a listed release's sessions without any report (absent without sessions)",
                  labels, rate)
        }
        gauge("watchdog_release_test_crashes", "Deliberate test crashes reported by a listed release", labels, Double(stats.testCrashes))
        var byKind: [String: Int] = [:]
        for (kind, reports) in stats.reportsByKind {
            byKind[Vocabulary.builtInKinds.contains(kind) ? kind : Self.customKinds, default: 0] += reports
        }
        for kind in byKind.keys.sorted() {
            gauge("watchdog_release_reports", "Reports of a listed release while the app was active, by kind (an app's own kinds summed as x-*)",
                  labels + [("kind", kind)], Double(byKind[kind] ?? 0))
        }
    }

    /// The release against its predecessor (`ReleaseReach.predecessor`, as the gate and the
    /// alerts pick it), on the always-valid interval.
    func addVerdict(app: String, release: String, against: String?, comparison: SessionComparison?) {
        let verdict = comparison?.verdict ?? "none"
        let labels = [("app", app), ("release", release), ("against", against ?? "")]
        for value in Self.verdicts {
            gauge("watchdog_release_verdict", "Verdict of a listed release against its predecessor (always-valid interval): 1 for the current one",
                  labels + [("verdict", value)], value == verdict ? 1 : 0)
        }
        guard let comparison, let ratio = comparison.ratio, let interval = comparison.interval else { return }
        gauge("watchdog_release_affected_ratio", "Affected-session rate of the release over its predecessor's (below 1: better)", labels, ratio)
        gauge("watchdog_release_affected_ratio_lower", "Lower end of the ratio's always-valid 95 % interval", labels, interval.lower)
        if let upper = interval.upper {
            gauge("watchdog_release_affected_ratio_upper", "Upper end of the ratio's always-valid 95 % interval", labels, upper)
        }
    }

    /// The text format of everything added.
    func bytes() -> [UInt8] { registry.emitToBuffer() }

    private func gauge(_ name: String, _ help: String, _ labels: [(String, String)], _ value: Double) {
        registry.makeGauge(descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help), labels: labels).set(to: value)
    }
}
