import Foundation
import Testing
import WatchdogSimulation

/// The simulator's fleet against the real daemon (port 0, temp data dir): sessions typed on
/// hardware keyboards with an input accessory view (an iPad showing the shortcut bar and the
/// accessory, an iPhone showing only the accessory) and transitions that never complete,
/// which only automatic lock detection finds.
@Suite(.serialized) struct SimulatedFleetKeyboardTests {
    @Test func hardwareKeyboardsWithAccessoriesAreBrokenDownAsHardwareAndStuckTransitionsAreFoundWithoutHostCalls() async throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let viewer = try daemon.addToken(role: "viewer")
        var plan = FleetPlan.twoReleases(app: "com.example.mail", devices: 6, sessions: 180)
        plan.maximumBackoff = 0.5
        plan.hardwareKeyboardProbability = 0.4
        plan.automaticLockProbability = 0.15
        plan.lockProbability = 0.05
        plan.uploadEvery = 3
        let endpoint = try #require(URL(string: "http://127.0.0.1:\(daemon.port)"))
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID().uuidString)")
        let produced = try await Fleet.run(plan, endpoint: endpoint, ingestKey: key, workDirectory: work, deadline: Date().addingTimeInterval(120))

        #expect(produced.undelivered == 0)
        #expect(produced.reports == produced.expectedReports, "every stuck transition found once; no completed one reported")
        #expect(produced.expectedHardwareKeyboardReports > 5)
        #expect(produced.expectedAutomaticLockReports > 5)

        // The keyboard breakdown: hardware groups per model, with what shows above the edge as height.
        let groups = try daemon.client.request("GET", "/v1/apps/com.example.mail/keyboard", token: viewer).json["groups"] as? [[String: Any]] ?? []
        let hardware = groups.filter { $0["mode"] as? String == "hardware" }
        #expect(hardware.reduce(0) { $0 + ($1["reports"] as? Int ?? 0) } == produced.expectedHardwareKeyboardReports)
        for group in hardware {
            let height = (group["model"] as? String ?? "").hasPrefix("iPad") ? 99 : 44
            #expect(group["min"] as? Int == height && group["max"] as? Int == height, "\(group)")
        }
        #expect(Set(hardware.compactMap { $0["model"] as? String }) == ["iPhone15,2", "iPhone12,1", "iPad8,1"])

        // Every automatic lock is an interaction_lock flagged `automatic`, with push or pop.
        var automatic = 0
        var cursor: String?
        repeat {
            let page = try daemon.client.request("GET", "/v1/apps/com.example.mail/reports?kind=interaction_lock&limit=500" + (cursor.map { "&cursor=\($0)" } ?? ""),
                                                 token: viewer).json
            for stored in page["reports"] as? [[String: Any]] ?? [] {
                let flags = ((stored["report"] as? [String: Any])?["lock"] as? [String: Any])?["flags"] as? [String: Bool] ?? [:]
                if flags["automatic"] == true {
                    automatic += 1
                    #expect(flags["push"] == true || (flags["pop"] == true && flags["interactive"] == true), "\(flags)")
                }
            }
            cursor = page["next_cursor"] as? String
        } while cursor != nil
        #expect(automatic == produced.expectedAutomaticLockReports)
    }
}
