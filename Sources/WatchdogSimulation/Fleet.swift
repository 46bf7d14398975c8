import Foundation
import WatchdogKit

/// Runs a fleet of simulated devices against a watchdogd URL, concurrently, and reports what
/// they produced — for demos, as a load generator, and for end-to-end tests.
public enum Fleet {
    /// Runs the plan; outboxes live under `workDirectory` (removed afterwards). With a
    /// `keyRotation`, the key is revoked and replaced part-way through. `transport` makes each
    /// device's HTTP transport (given the device's index); tests wrap the real one to watch it.
    public static func run(_ plan: FleetPlan, endpoint: URL, ingestKey: String, workDirectory: URL, deadline: Date = .distantFuture,
                           keyRotation: KeyRotation? = nil,
                           transport: (_ device: Int) -> any HTTPTransport = { _ in URLSessionTransport() }) async throws -> FleetResult {
        let keys = KeyCoordinator(key: ingestKey, rotation: keyRotation)
        let devices = max(1, plan.devices)
        let perDevice = (0..<devices).map { plan.sessions / devices + ($0 < plan.sessions % devices ? 1 : 0) }
        var simulated: [(SimulatedDevice, Int)] = []
        for index in 0..<devices {
            let device = try await SimulatedDevice(index: index, plan: plan, endpoint: endpoint, keys: keys,
                                             directory: workDirectory.appendingPathComponent("device-\(index)"), transport: transport(index))
            simulated.append((device, perDevice[index]))
        }
        let result = await withTaskGroup(of: FleetResult.self) { group in
            for (device, sessions) in simulated {
                group.addTask { await device.run(sessions: sessions, deadline: deadline) }
            }
            var total = FleetResult()
            for await partial in group { total.merge(partial) }
            return total
        }
        try? FileManager.default.removeItem(at: workDirectory)
        return result
    }
}

/// Counts sessions across the fleet and runs the key rotation when its turn comes; devices
/// read the key in force before each session.
actor KeyCoordinator {
    private(set) var key: String
    private let rotation: KeyRotation?
    private var sessions = 0
    private var revoked = false
    private var replaced = false

    init(key: String, rotation: KeyRotation?) {
        self.key = key
        self.rotation = rotation
    }

    /// One session done; returns the key in force.
    func sessionDone() async -> String {
        sessions += 1
        guard let rotation else { return key }
        if !revoked, sessions >= rotation.revokeAfter {
            revoked = true
            try? await rotation.revoke()
        }
        if !replaced, sessions >= rotation.replaceAfter {
            replaced = true
            if let new = try? await rotation.issue() { key = new }
        }
        return key
    }
}
