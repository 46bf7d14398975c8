import Foundation
import WatchdogStore

/// One app's answer to "the ingest key is public" (docs/security.md, "What a holder of the ingest key
/// can do"): which releases are listed without a declaration, the limits past which session
/// starts are held apart, and how concentrated a verdict's sessions may be before it is called
/// `unreliable`. Stored per app as JSON (`app_admission`); an app without a row has the defaults.
public struct AdmissionSettings: Codable, Sendable, Equatable {
    /// `auto`, `strict` or `open` (`AdmissionPolicy.Mode`).
    public var mode: String = "auto"
    /// `auto`: distinct installs, and distinct networks (IPv4 /24, IPv6 /48), with counted
    /// session starts a release needs. 5 installs on 3 networks is a handful of testers at
    /// home; one attacker's address is one network, however many install ids it invents.
    public var minimumInstalls: Int = 5
    public var minimumNetworks: Int = 3
    /// `auto`: releases admitted without a declaration in any 24 hours; a team ships a few
    /// builds a day at most, so more is someone minting versions.
    public var releasesPerDay: Int = 5
    /// Session starts one install may make per hour of arrival and still be counted (a person
    /// opening the app every three minutes for an hour); 0: no limit.
    public var sessionsPerInstallPerHour: Int = 20
    /// New installs one network may bring per hour and still be counted (a team installing
    /// a build in one office); 0: no limit. Past it, the install is held apart for good.
    public var newInstallsPerNetworkPerHour: Int = 20
    /// A session start more than this many hours before its arrival is held apart
    /// (`far_from_arrival`): the SDK's outbox drops what it could not send within a week, so
    /// 8 days; 0: no limit. One more than an hour ahead of the server's clock always is.
    public var maximumSessionAgeHours: Int = 192
    /// A verdict is `unreliable` when more than this share of its sessions comes from the top
    /// 1 % of installs, from one network, or from one hour; 1: never.
    public var maximumTopInstallsShare: Double = 0.5
    public var maximumNetworkShare: Double = 0.5
    public var maximumHourShare: Double = 0.5
    /// A release that is neither declared nor of comparable reach is not a default base, not
    /// watched by alerts and not part of a rollout's evidence: comparable means counted sessions
    /// from at least this share of the distinct networks of the release it is measured against
    /// (the target of a gate or an alert; the widest of the releases watched). 0: any.
    public var minimumReachShare: Double = 0.25
    /// Verdicts weigh each side by network, each network's weight bounded (`NetworkWeighting`),
    /// so a few networks cannot carry a release; off, each install is a cluster of its own and
    /// nothing is bounded — for an app whose testers all share one network (`open` sets it off).
    public var weighByNetwork = true

    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case mode
        case minimumInstalls = "minimum_installs"
        case minimumNetworks = "minimum_networks"
        case releasesPerDay = "releases_per_day"
        case sessionsPerInstallPerHour = "sessions_per_install_per_hour"
        case newInstallsPerNetworkPerHour = "new_installs_per_network_per_hour"
        case maximumSessionAgeHours = "maximum_session_age_hours"
        case maximumTopInstallsShare = "maximum_top_installs_share"
        case maximumNetworkShare = "maximum_network_share"
        case maximumHourShare = "maximum_hour_share"
        case minimumReachShare = "minimum_reach_share"
        case weighByNetwork = "weigh_by_network"
    }

    public init(from decoder: any Decoder) throws {
        let defaults = AdmissionSettings()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        mode = try container.decodeIfPresent(String.self, forKey: .mode) ?? defaults.mode
        minimumInstalls = try container.decodeIfPresent(Int.self, forKey: .minimumInstalls) ?? defaults.minimumInstalls
        minimumNetworks = try container.decodeIfPresent(Int.self, forKey: .minimumNetworks) ?? defaults.minimumNetworks
        releasesPerDay = try container.decodeIfPresent(Int.self, forKey: .releasesPerDay) ?? defaults.releasesPerDay
        sessionsPerInstallPerHour = try container.decodeIfPresent(Int.self, forKey: .sessionsPerInstallPerHour) ?? defaults.sessionsPerInstallPerHour
        newInstallsPerNetworkPerHour = try container.decodeIfPresent(Int.self, forKey: .newInstallsPerNetworkPerHour) ?? defaults.newInstallsPerNetworkPerHour
        maximumSessionAgeHours = try container.decodeIfPresent(Int.self, forKey: .maximumSessionAgeHours) ?? defaults.maximumSessionAgeHours
        maximumTopInstallsShare = try container.decodeIfPresent(Double.self, forKey: .maximumTopInstallsShare) ?? defaults.maximumTopInstallsShare
        maximumNetworkShare = try container.decodeIfPresent(Double.self, forKey: .maximumNetworkShare) ?? defaults.maximumNetworkShare
        maximumHourShare = try container.decodeIfPresent(Double.self, forKey: .maximumHourShare) ?? defaults.maximumHourShare
        minimumReachShare = try container.decodeIfPresent(Double.self, forKey: .minimumReachShare) ?? defaults.minimumReachShare
        weighByNetwork = try container.decodeIfPresent(Bool.self, forKey: .weighByNetwork) ?? defaults.weighByNetwork
    }

    /// Every check off: releases listed on sight, no session limits, no concentration mark —
    /// watchdogd before admission existed. For an app whose testers all share one network
    /// (and for tests that post a fleet from 127.0.0.1).
    public static let open: AdmissionSettings = {
        var settings = AdmissionSettings()
        settings.mode = "open"
        settings.minimumInstalls = 0
        settings.minimumNetworks = 0
        settings.sessionsPerInstallPerHour = 0
        settings.newInstallsPerNetworkPerHour = 0
        settings.maximumSessionAgeHours = 0
        settings.maximumTopInstallsShare = 1
        settings.maximumNetworkShare = 1
        settings.maximumHourShare = 1
        settings.minimumReachShare = 0
        settings.weighByNetwork = false
        return settings
    }()

    /// Throws the error naming the first field out of range.
    public func validate() throws(APIError) {
        guard AdmissionPolicy.Mode(rawValue: mode) != nil else {
            throw .badRequest("invalid_field", "mode must be one of auto, strict, open, got \"\(mode.prefix(32))\"")
        }
        for (field, value, range) in [("minimum_installs", minimumInstalls, 0...1_000_000), ("minimum_networks", minimumNetworks, 0...1_000_000),
                                      ("releases_per_day", releasesPerDay, 0...10_000), ("sessions_per_install_per_hour", sessionsPerInstallPerHour, 0...1_000_000),
                                      ("new_installs_per_network_per_hour", newInstallsPerNetworkPerHour, 0...1_000_000),
                                      ("maximum_session_age_hours", maximumSessionAgeHours, 0...100_000)] where !range.contains(value) {
            throw .badRequest("invalid_field", "\(field) must be a whole number from \(range.lowerBound) to \(range.upperBound), got \(value)")
        }
        for (field, value) in [("maximum_top_installs_share", maximumTopInstallsShare), ("maximum_network_share", maximumNetworkShare),
                               ("maximum_hour_share", maximumHourShare)] where !(value.isFinite && value > 0 && value <= 1) {
            throw .badRequest("invalid_field", "\(field) must be a share above 0 and at most 1 (1: never unreliable for this), got \(value)")
        }
        guard minimumReachShare.isFinite, minimumReachShare >= 0, minimumReachShare <= 1 else {
            throw .badRequest("invalid_field", "minimum_reach_share must be a share from 0 to 1 (0: every listed release counts), got \(minimumReachShare)")
        }
    }

    /// The settings as stored and shown (JSON, keys sorted).
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// Settings from their stored JSON; `nil` when it is not such a document.
    public static func decoded(_ json: String) -> AdmissionSettings? {
        try? JSONDecoder().decode(AdmissionSettings.self, from: Data(json.utf8))
    }

    /// What the store applies with each record of the app.
    public var policy: IngestPolicy {
        IngestPolicy(admission: AdmissionPolicy(mode: AdmissionPolicy.Mode(rawValue: mode) ?? .auto, minimumInstalls: minimumInstalls,
                                                minimumNetworks: minimumNetworks, releasesPerDay: releasesPerDay),
                     limits: SessionLimits(sessionsPerInstallPerHour: sessionsPerInstallPerHour, newInstallsPerNetworkPerHour: newInstallsPerNetworkPerHour))
    }

    /// How far ahead of the server's clock a session start may be (a device clock set wrong).
    static let sessionStartMaximumAheadMilliseconds: Int64 = 3_600_000
}
