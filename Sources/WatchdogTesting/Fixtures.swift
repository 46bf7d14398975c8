import Foundation

/// The JSON fixtures in `Tests/Fixtures`.
public enum Fixtures {
    public static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/Fixtures")

    /// A fixture file, its times (`occurred_at`, `started_at`) moved by whole days from the day
    /// the file was written for to `FixtureDay.reports`, spacing kept.
    public static func json(_ path: String) throws -> Any {
        FixtureDay.moveDates(in: try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent(path))))
    }

    /// The 50 reports of `valid-batch.json`, on `FixtureDay.reports` (10:00:00 to 10:01:49 UTC).
    public static func validReports() throws -> [[String: Any]] {
        let batch = try json("reports/valid-batch.json") as? [String: Any]
        return batch?["reports"] as? [[String: Any]] ?? []
    }

    /// One valid report with a fresh id (`occurred_at` at 10:00 UTC of `FixtureDay.reports`), in a session of its own
    /// unless `sessionID` is given (the fixture's own session would make every report after the
    /// tenth of one issue count as flooded).
    public static func freshReport(app: String = "com.example.mail", version: String = "14.2.0", build: String = "31245", kind: String? = nil, sessionID: String? = nil, appState: String = "active") throws -> [String: Any] {
        var report = try validReports()[0]
        report["id"] = UUID().uuidString.lowercased()
        report["app"] = app
        report["release"] = ["version": version, "build": build, "channel": "beta"]
        report["app_state"] = appState
        if let kind { report["kind"] = kind }
        report["session_id"] = sessionID ?? "S-\(UUID().uuidString.lowercased())"
        return report
    }

    /// A session start of `FixtureDay.reports` at 09:00 UTC, before the fixture reports.
    public static func session(app: String = "com.example.mail", version: String = "14.2.0", build: String = "31245", id: String = UUID().uuidString.lowercased()) -> [String: Any] {
        [
            "id": id, "install_id": "I-1", "started_at": FixtureDay.reports.at(9), "app": app,
            "release": ["version": version, "build": build, "channel": "beta"],
            "device": ["model": "iPhone15,2", "os": "iOS", "os_version": "18.1", "idiom": "phone"],
        ]
    }

    /// The reports with each session id replaced by a fresh UUID (the same for the same id), and
    /// a start for each: session starts need UUIDs, reports may name any text.
    public static func withStartedSessions(_ reports: [[String: Any]]) -> (reports: [[String: Any]], starts: [[String: Any]]) {
        var ids: [String: String] = [:]
        let rewritten = reports.map { report -> [String: Any] in
            var report = report
            if let id = report["session_id"] as? String {
                if ids[id] == nil { ids[id] = UUID().uuidString.lowercased() }
                report["session_id"] = ids[id]
            }
            return report
        }
        return (rewritten, sessionStarts(for: rewritten))
    }

    /// A start for each session the reports name (once each, with the report's release and
    /// install): a report counts toward affected sessions only when its session was started.
    public static func sessionStarts(for reports: [[String: Any]]) -> [[String: Any]] {
        var seen: Set<String> = []
        var starts: [[String: Any]] = []
        for report in reports {
            guard let id = report["session_id"] as? String, seen.insert(id).inserted else { continue }
            let release = report["release"] as? [String: Any] ?? [:]
            var start = session(app: report["app"] as? String ?? "com.example.mail", version: release["version"] as? String ?? "14.2.0",
                                build: release["build"] as? String ?? "31245", id: id)
            if let install = report["install_id"] { start["install_id"] = install }
            starts.append(start)
        }
        return starts
    }
}
