/// An app and its releases.
public struct AppSummary: Sendable, Equatable {
    public var app: String
    public var createdAt: Int64
    public var releases: [ReleaseID]
}

/// `version (build)`.
public struct ReleaseID: Sendable, Hashable {
    public var version: String
    public var build: String

    public init(version: String, build: String) {
        self.version = version
        self.build = build
    }
}

/// The roll-up of one release, kept up to date as reports and sessions arrive.
public struct ReleaseStats: Sendable, Equatable {
    public var release: ReleaseID
    public var sessions: Int
    /// Reports from the `active` app state, per kind.
    public var reportsByKind: [String: Int]
    /// Reports from `inactive`/`background`, per kind: counted apart.
    public var suspectReportsByKind: [String: Int]
    /// Sessions with at least one report from the `active` state.
    public var affectedSessions: Int
    public var autoFixed: Int
    public var testCrashes: Int
    /// Earliest and latest `occurred_at`/`started_at` seen, in ms since the epoch.
    public var firstSeen: Int64
    public var lastSeen: Int64
    /// Active reports past the per-session, per-fingerprint cap, per kind: counted apart.
    public var floodedReportsByKind: [String: Int] = [:]
    /// How the release's reports spread over installs (see `TelemetryStore.concentration`).
    public var concentration = InstallConcentration()
    /// Its per-dimension and per-install roll-ups were rebuilt, on upgrade, from raw rows that
    /// retention had partly deleted: they undercount, and are not compared.
    public var partialHistory = false
    /// Items clients evicted from a full outbox / quarantined, as they reported (`client_dropped`).
    public var clientEvicted = 0
    public var clientQuarantined = 0
    /// Session starts stored but held apart from every denominator (`SessionMarks`).
    public var implausibleSessions = 0
    /// Reports whose session has no counted start: counted as reports, never as affected sessions.
    public var unknownSessionReports = 0
}

/// How concentrated a release's active reports (flooded included) are among its installs.
public struct InstallConcentration: Sendable, Equatable {
    /// How many installs make "the top 1 %" of `installs`, by reports or by sessions: at least
    /// one, none of none. Every concentration figure, report or session, reads this many.
    public static func topInstalls(among installs: Int) -> Int {
        installs == 0 ? 0 : max(1, (installs + 99) / 100)
    }

    /// Installs with a session start or an active report in the release.
    public var installs = 0
    /// The top 1 % of those installs by reports, at least one (0 without installs).
    public var topInstalls = 0
    /// Active reports that carry an install id, and how many of them the top installs sent.
    public var reports = 0
    public var topInstallsReports = 0

    public init(installs: Int = 0, topInstalls: Int = 0, reports: Int = 0, topInstallsReports: Int = 0) {
        self.installs = installs
        self.topInstalls = topInstalls
        self.reports = reports
        self.topInstallsReports = topInstallsReports
    }
}

/// One install's sessions and active reports in one release: what a config cohort is made of.
public struct InstallRow: Sendable, Equatable {
    public var installID: String
    public var channel: String?
    public var idiom: String?
    /// The network (IPv4 /24, IPv6 /48) its first counted session start of the release came
    /// from; `nil` when none was known (made in-process, or stored before it was kept).
    public var network: String? = nil
    public var sessions: Int
    /// Active reports, flooded ones included.
    public var reports: Int
    /// Sessions of this install with at least one active report.
    public var affectedSessions: Int
    /// Per kind: active reports under the flood cap, and sessions with at least one.
    public var kinds: [String: (reports: Int, affectedSessions: Int)]
    /// Of `sessions` and `affectedSessions` (overall and per kind), those whose start carried
    /// the assertion of the install's owning App Attest key: what attested views count.
    public var attestedSessions = 0
    public var attestedAffectedSessions = 0
    public var attestedKinds: [String: Int] = [:]

    public init(installID: String, channel: String? = nil, idiom: String? = nil, network: String? = nil, sessions: Int, reports: Int = 0,
                affectedSessions: Int, kinds: [String: (reports: Int, affectedSessions: Int)] = [:]) {
        self.installID = installID
        self.channel = channel
        self.idiom = idiom
        self.network = network
        self.sessions = sessions
        self.reports = reports
        self.affectedSessions = affectedSessions
        self.kinds = kinds
    }

    public static func == (lhs: InstallRow, rhs: InstallRow) -> Bool {
        lhs.installID == rhs.installID && lhs.channel == rhs.channel && lhs.idiom == rhs.idiom && lhs.network == rhs.network && lhs.sessions == rhs.sessions
            && lhs.reports == rhs.reports
            && lhs.affectedSessions == rhs.affectedSessions && lhs.kinds.mapValues { [$0.reports, $0.affectedSessions] } == rhs.kinds.mapValues { [$0.reports, $0.affectedSessions] }
    }
}

/// Session starts of a release in one hour (hours since the epoch, UTC).
public struct HourlySessionsRow: Sendable, Equatable {
    public var hour: Int64
    /// Counted session starts dated in this hour.
    public var sessions: Int
    /// Sessions whose first active report in the release is dated in this hour (they may have
    /// started in an earlier one).
    public var affectedSessions: Int = 0
}

/// One release's counted session starts over a range of hours, and those attested.
public struct ReleaseSessionsRow: Sendable, Equatable {
    public var release: ReleaseID
    public var sessions: Int
    public var attestedSessions: Int

    public init(release: ReleaseID, sessions: Int, attestedSessions: Int) {
        self.release = release
        self.sessions = sessions
        self.attestedSessions = attestedSessions
    }
}
