/// Why a session start is stored but not counted (the bits of `sessions.implausible`): the
/// ingest key is public, so a start is only a claim, and a claim past these limits is held
/// apart from every denominator (docs/security.md, "What a holder of the ingest key can do").
public struct SessionMarks: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Its install had already started `sessions_per_install_per_hour` sessions in the hour
    /// the start arrived.
    public static let installRate = SessionMarks(rawValue: 1)
    /// Its install first appeared from a network that had already brought
    /// `new_installs_per_network_per_hour` new installs of the app in that hour (every later
    /// session of such an install carries the mark too).
    public static let networkNewInstalls = SessionMarks(rawValue: 2)
    /// Its `started_at` is far from when it arrived (more than the outbox keeps before, or
    /// ahead of the server's clock): it would move a release's first day.
    public static let farFromArrival = SessionMarks(rawValue: 4)

    /// The marks' names, as the API and the dashboard show them.
    public var names: [String] {
        var names: [String] = []
        if contains(.installRate) { names.append("install_rate") }
        if contains(.networkNewInstalls) { names.append("network_new_installs") }
        if contains(.farFromArrival) { names.append("far_from_arrival") }
        return names
    }
}

/// The per-app limits the store applies to session starts as they arrive; 0: no limit.
public struct SessionLimits: Sendable, Equatable {
    public var sessionsPerInstallPerHour: Int
    public var newInstallsPerNetworkPerHour: Int

    public init(sessionsPerInstallPerHour: Int = 0, newInstallsPerNetworkPerHour: Int = 0) {
        self.sessionsPerInstallPerHour = sessionsPerInstallPerHour
        self.newInstallsPerNetworkPerHour = newInstallsPerNetworkPerHour
    }

    /// No limit at all.
    public static let none = SessionLimits()
}

/// A release on the app's list: declared by an admin (or a CI job with an admin token) or
/// admitted — automatically once it had enough plausible installs and networks, or by an admin.
public struct ReleaseAdmission: Sendable, Equatable {
    public enum State: String, Sendable {
        case declared
        case admitted
    }

    public var app: String
    public var release: ReleaseID
    public var state: State
    /// Who or what listed it: `auto`, `open`, `upgrade`, or the credential's name.
    public var by: String
    /// Milliseconds since the epoch.
    public var at: Int64
    /// Why, in words (the evidence of an automatic admission).
    public var reason: String

    public init(app: String, release: ReleaseID, state: State, by: String, at: Int64, reason: String) {
        self.app = app
        self.release = release
        self.state = state
        self.by = by
        self.at = at
        self.reason = reason
    }
}

/// What an automatic admission looks at: distinct installs and networks with counted
/// (plausible) session starts in the release.
public struct AdmissionEvidence: Sendable, Equatable {
    public var sessions = 0
    public var installs = 0
    public var networks = 0

    public init(sessions: Int = 0, installs: Int = 0, networks: Int = 0) {
        self.sessions = sessions
        self.installs = installs
        self.networks = networks
    }
}

/// Releases stored but not listed, for admins: how many, their sessions and reports, and a page.
public struct UnlistedReleases: Sendable {
    public var total = 0
    /// Counted and held-apart session starts, and reports, over all unlisted releases.
    public var sessions = 0
    public var implausibleSessions = 0
    public var reports = 0
    /// At most the page size, most sessions first, then by version and build.
    public var page: [ReleaseStats] = []

    public init() {}
}

/// How concentrated a release's counted session starts are: among installs (top 1 %, at
/// least one), among networks (the largest) and in time (the busiest hour of arrival).
public struct SessionConcentration: Sendable, Equatable {
    public var sessions = 0
    public var installs = 0
    public var topInstalls = 0
    public var topInstallsSessions = 0
    public var networks = 0
    public var topNetworkSessions = 0
    public var busiestHourSessions = 0

    public init(sessions: Int = 0, installs: Int = 0, topInstalls: Int = 0, topInstallsSessions: Int = 0, networks: Int = 0,
                topNetworkSessions: Int = 0, busiestHourSessions: Int = 0) {
        self.sessions = sessions
        self.installs = installs
        self.topInstalls = topInstalls
        self.topInstallsSessions = topInstallsSessions
        self.networks = networks
        self.topNetworkSessions = topNetworkSessions
        self.busiestHourSessions = busiestHourSessions
    }
}

/// When a release is listed without being declared (per app; docs/release-health.md, "Releases are admitted").
public struct AdmissionPolicy: Sendable, Equatable {
    public enum Mode: String, Sendable, CaseIterable {
        /// Listed once its counted session starts come from enough installs and networks.
        case auto
        /// Listed only when declared.
        case strict
        /// Listed as soon as anything of it arrives (every test device on one network; the
        /// behaviour before admission existed).
        case open
    }

    public var mode: Mode
    public var minimumInstalls: Int
    public var minimumNetworks: Int
    /// Releases of the app admitted automatically in any 24 hours, at most.
    public var releasesPerDay: Int

    public init(mode: Mode, minimumInstalls: Int, minimumNetworks: Int, releasesPerDay: Int) {
        self.mode = mode
        self.minimumInstalls = minimumInstalls
        self.minimumNetworks = minimumNetworks
        self.releasesPerDay = releasesPerDay
    }

    public static let open = AdmissionPolicy(mode: .open, minimumInstalls: 0, minimumNetworks: 0, releasesPerDay: 0)

    /// Whether `auto` admits a release with this evidence (the daily budget aside).
    public func isMet(by evidence: AdmissionEvidence) -> Bool {
        evidence.installs >= minimumInstalls && evidence.networks >= minimumNetworks && evidence.sessions > 0
    }

    /// The words an automatic admission is stored with.
    static func reason(_ evidence: AdmissionEvidence) -> String {
        "\(evidence.sessions) counted sessions from \(evidence.installs) installs on \(evidence.networks) networks"
    }

    /// What an automatic admission over a full day's budget adds: whom it displaced.
    static func displacing(_ release: ReleaseID, networks: Int) -> String {
        "; the day's budget full, in place of \(release.version) (\(release.build)), auto-admitted from \(networks) networks, now unlisted"
    }
}

/// What the server tells the store about an app with each record it stores.
public struct IngestPolicy: Sendable, Equatable {
    public var admission: AdmissionPolicy
    public var limits: SessionLimits

    public init(admission: AdmissionPolicy, limits: SessionLimits) {
        self.admission = admission
        self.limits = limits
    }

    /// No limits, every release listed on sight: records made without a policy (store tests).
    public static let open = IngestPolicy(admission: .open, limits: .none)
}
