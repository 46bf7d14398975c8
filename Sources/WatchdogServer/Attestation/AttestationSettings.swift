import Foundation

/// One app's App Attest policy (docs/security.md, "Attested installs"): `off` (the default: assertions
/// are ignored), `observe` (unattested uploads are stored, and views can leave them out with
/// `installs=attested`) or `require` (uploads without a valid assertion are refused). Stored
/// per app as JSON (`app_attestation`).
public struct AttestationSettings: Codable, Sendable, Equatable {
    public enum Mode: String, Codable, Sendable, CaseIterable {
        case off, observe, require
    }

    /// App Attest's two environments, as a key carries them: keys made by a development-signed
    /// build carry `appattestdevelop`, those of TestFlight and App Store builds `appattest`. Each
    /// attested key is stored with its own (`AttestedKey.environment`).
    public enum KeyEnvironment: String, Codable, Sendable, CaseIterable {
        case development, production

        var aaguid: [UInt8] {
            switch self {
            case .development: AuthenticatorData.developmentAAGUID
            case .production: AuthenticatorData.productionAAGUID
            }
        }
    }

    /// The environments whose keys the app accepts: one, or `both` — an app whose testers run
    /// Xcode-installed and TestFlight builds side by side.
    public enum Environment: String, Codable, Sendable, CaseIterable {
        case development, production, both

        /// The key environments accepted.
        var keyEnvironments: [KeyEnvironment] {
            switch self {
            case .development: [.development]
            case .production: [.production]
            case .both: [.development, .production]
            }
        }
    }

    public var mode: Mode = .off
    /// The Apple Developer team id (10 characters, e.g. `ABCDE12345`).
    public var teamID: String = ""
    /// The app's bundle id (e.g. `com.example.mail`).
    public var bundleID: String = ""
    public var environment: Environment = .production

    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case mode
        case teamID = "team_id"
        case bundleID = "bundle_id"
        case environment
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        mode = try container.decodeIfPresent(Mode.self, forKey: .mode) ?? .off
        teamID = try container.decodeIfPresent(String.self, forKey: .teamID) ?? ""
        bundleID = try container.decodeIfPresent(String.self, forKey: .bundleID) ?? ""
        environment = try container.decodeIfPresent(Environment.self, forKey: .environment) ?? .production
    }

    /// `TEAMID.bundle.id`: what the RP id hash of every attestation and assertion is SHA-256 of.
    var appID: String { teamID + "." + bundleID }

    /// Throws the error naming the first field that is wrong.
    public func validate() throws(APIError) {
        let teamCharacters = teamID.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        if mode != .off || !teamID.isEmpty {
            guard teamID.utf8.count == 10, teamCharacters else {
                throw .badRequest("invalid_field", "team_id must be the 10-character Apple Developer team id (A-Z, 0-9), got \"\(teamID.prefix(32))\"")
            }
        }
        let bundleCharacters = bundleID.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
        }
        if mode != .off || !bundleID.isEmpty {
            guard (1...155).contains(bundleID.utf8.count), bundleCharacters else {
                throw .badRequest("invalid_field", "bundle_id must be the app's bundle id (letters, digits, '.' and '-', at most 155), got \"\(bundleID.prefix(64))\"")
            }
        }
    }

    /// The settings as stored and shown (JSON, keys sorted).
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// Settings from their stored JSON; `nil` when it is not such a document.
    public static func decoded(_ json: String) -> AttestationSettings? {
        try? JSONDecoder().decode(AttestationSettings.self, from: Data(json.utf8))
    }
}
