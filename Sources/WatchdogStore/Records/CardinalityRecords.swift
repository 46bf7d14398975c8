/// The distinct values a release already has in the dimensions watchdogd caps (README,
/// "Cardinality"), the most reported first: what a node's cardinality registry starts from
/// when it first meets the release.
public struct ReleaseValues: Sendable, Equatable {
    public var screens: [String] = []
    public var views: [String] = []
    /// Device models and keyboard input modes of the keyboard-height histogram.
    public var deviceModels: [String] = []
    public var inputModes: [String] = []
    /// Channels (`release.channel`) of the release's reports.
    public var channels: [String] = []

    public init(screens: [String] = [], views: [String] = [], deviceModels: [String] = [], inputModes: [String] = [], channels: [String] = []) {
        self.screens = screens
        self.views = views
        self.deviceModels = deviceModels
        self.inputModes = inputModes
        self.channels = channels
    }
}

/// The SQL both stores read a release's capped values with: one query per dimension, each on
/// a roll-up table's primary key (app, version, build, …), grouped and ordered by volume.
enum CardinalitySQL {
    /// `(table, column, condition, volume)` of each dimension of `ReleaseValues`, in its order.
    static let releaseDimensions: [(table: String, column: String, condition: String, volume: String)] = [
        ("release_breakdown", "value", "dimension = 'screen' AND value <> ''", "reports + suspect_reports + flooded_reports"),
        ("issue_releases", "view_name", "view_name IS NOT NULL", "reports + suspect_reports + flooded_reports"),
        ("keyboard_heights", "model", "model <> ''", "reports"),
        ("keyboard_heights", "input_mode", "input_mode <> ''", "reports"),
        ("release_breakdown", "value", "dimension = 'channel' AND value <> ''", "reports + suspect_reports + flooded_reports"),
    ]

    /// The query of one dimension; `placeholders` are the app, version, build and limit parameters.
    static func releaseValues(_ dimension: (table: String, column: String, condition: String, volume: String), placeholders: [String]) -> String {
        """
        SELECT \(dimension.column) FROM \(dimension.table)
        WHERE app = \(placeholders[0]) AND version = \(placeholders[1]) AND build = \(placeholders[2]) AND \(dimension.condition)
        GROUP BY \(dimension.column) ORDER BY sum(\(dimension.volume)) DESC, \(dimension.column) LIMIT \(placeholders[3])
        """
    }

    static func customKinds(placeholders: [String]) -> String {
        """
        SELECT kind FROM release_kinds WHERE app = \(placeholders[0]) AND kind LIKE 'x-%'
        GROUP BY kind ORDER BY sum(reports + suspect_reports + flooded_reports) DESC, kind LIMIT \(placeholders[1])
        """
    }

    static func values(_ columns: [[String]]) -> ReleaseValues {
        ReleaseValues(screens: columns[0], views: columns[1], deviceModels: columns[2], inputModes: columns[3], channels: columns[4])
    }
}
