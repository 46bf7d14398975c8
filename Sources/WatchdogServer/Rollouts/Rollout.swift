import WatchdogWire

/// A guarded rollout of one config rule: its plan, where it stands and what happened, stored
/// whole as JSON (`RolloutRecord.document`) so a restart resumes it where it was. Times are
/// milliseconds of the server's clock, written as RFC 3339.
struct Rollout: Codable, Equatable, Sendable {
    var app: String
    var rule: String
    var plan: RolloutPlan
    var status: RolloutStatus
    /// The index in `plan.steps` of the step in force.
    var step: Int
    /// The percentage the rollout last gave the rule.
    var percent: Double
    @ISOTime var startedAt: Int64
    var startedBy: String
    @ISOTime var stepStartedAt: Int64
    /// Per release (`version (build)`), each cohort's session starts when the step began: a
    /// step's sessions are those since.
    var baseline: [String: CohortSessions]
    /// The guard's latest look, whatever it decided.
    var lastLook: RolloutLook?
    /// A step decided and saved but whose config version may not be made yet (a crash between
    /// the two): finished by the next pass before anything else.
    var pending: RolloutEvent?
    /// The condition (`rollout_rolled_back`, `rollout_completed`) whose alerts are still to be
    /// stored; their firings make storing them twice store nothing.
    var alertPending: String?
    /// Oldest first, at most `maximumHistory` (the oldest pauses and resumes go first).
    var history: [RolloutEvent]

    static let maximumHistory = 100

    /// Step actions recorded in the history, as the guard or a person took them.
    var isFinished: Bool { status == .completed || status == .rolledBack || status == .aborted }

    mutating func record(_ event: RolloutEvent) {
        history.append(event)
        while history.count > Self.maximumHistory {
            let index = history.firstIndex { $0.action == "paused" || $0.action == "resumed" } ?? 1
            history.remove(at: index)
        }
    }
}

enum RolloutStatus: String, Codable, Sendable {
    case active, paused, completed, aborted
    case rolledBack = "rolled_back"
}

/// Session starts of the two cohorts of one release.
struct CohortSessions: Codable, Equatable, Sendable {
    var matched: Int
    var unmatched: Int
}

/// One look of the guard: what it saw and what it decided.
struct RolloutLook: Codable, Equatable, Sendable {
    @ISOTime var at: Int64
    /// `wait`, `advance` or `roll_back`.
    var decision: String
    var reason: String
    var evidence: [RolloutEvidence]
}

/// One step taken (or a pause, resume or abort): by whom, from which percentage to which,
/// the config version it made and the evidence it rested on.
struct RolloutEvent: Codable, Equatable, Sendable {
    @ISOTime var at: Int64
    /// `started`, `advanced`, `completed`, `rolled_back`, `paused`, `resumed` or `aborted`.
    var action: String
    var actor: String
    var fromPercent: Double
    var toPercent: Double
    /// The step index after the event.
    var step: Int
    var reason: String
    var configVersion: Int?
    var evidence: [RolloutEvidence]
}

/// Milliseconds since the epoch, written and read as RFC 3339 (`2026-11-20T10:00:01.001Z`).
@propertyWrapper
struct ISOTime: Codable, Equatable, Sendable {
    var wrappedValue: Int64

    init(wrappedValue: Int64) {
        self.wrappedValue = wrappedValue
    }

    init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let milliseconds = Timestamp.parseMilliseconds(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an RFC 3339 time: \(text.prefix(40))"))
        }
        wrappedValue = milliseconds
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Timestamp.format(milliseconds: wrappedValue))
    }
}
