import Foundation

/// The short markdown a CI job shows as it is: the decision, the interval, each side's
/// sessions and installs, the reasons. Release names are client text: each is a code span
/// (`AlertMessage.code`), so a release called `[x](https://…)` or `<img …>` stays text.
enum GateSummary {
    static func markdown(app: String, release: String, against: String?, decision: GateDecision, view: CompareView?, installs: (base: Int, target: Int)) -> String {
        let headline = switch decision.result {
        case .pass: "✅ pass"
        case .fail: "❌ fail"
        case .notYet: "⏳ not yet"
        }
        var lines = ["**Watchdog gate: \(headline)** — \(AlertMessage.code(release)) against \(against.map(AlertMessage.code) ?? "no base") (\(AlertMessage.code(app)))", ""]
        if let view {
            let base = view.overall.base, target = view.overall.target
            lines += [
                "| | base | release |",
                "|---|---:|---:|",
                "| sessions | \(count(base.sessions)) | \(count(target.sessions)) |",
                "| installs | \(count(installs.base)) | \(count(installs.target)) |",
                "| sessions with a glitch | \(affected(base)) | \(affected(target)) |",
                "",
                "Verdict (always-valid interval): **\(view.overall.verdict ?? "none")** — \(GateDecision.describe(view.overall)).",
                "",
            ]
        }
        lines += decision.reasons.map { "- " + $0 }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `0.33`, `1.5`, `12`: two significant figures at most.
    static func ratio(_ value: Double) -> String {
        guard value.isFinite else { return "∞" }
        if value >= 10 { return String(Int(value.rounded())) }
        let text = String(format: value >= 1 ? "%.2f" : "%.2g", value)
        return text.contains(".") ? String(text.reversed().drop(while: { $0 == "0" }).drop(while: { $0 == "." }).reversed()) : text
    }

    private static func count(_ value: Int) -> String {
        let digits = String(value)
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return out
    }

    private static func affected(_ side: SessionComparison.Side) -> String {
        guard let rate = side.affectedSessionRate else { return count(side.affectedSessions) }
        return "\(count(side.affectedSessions)) (\(String(format: "%.1f", rate * 100)) %)"
    }
}
