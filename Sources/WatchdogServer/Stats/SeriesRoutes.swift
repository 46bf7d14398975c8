import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// `GET /v1/apps/{app}/timeseries` and `GET /v1/apps/{app}/keyboard`.
struct SeriesRoutes: Sendable {
    let compare: CompareRoutes
    let clock: @Sendable () -> Int64

    static let maximumBuckets = 5_000

    func timeseries(app: String, request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let releases = try compare.releases(of: app)
        let release = try request.query["release"].map { text throws(APIError) in try ReleaseResolver(releases: releases).resolve(text, parameter: "release") }
        let bucketName = request.query["bucket"] ?? "hour"
        guard bucketName == "hour" || bucketName == "day" else {
            throw .badRequest("invalid_parameter", "bucket must be hour or day, got \(bucketName.prefix(20))")
        }
        let hoursPerBucket: Int64 = bucketName == "day" ? 24 : 1
        if let kind = request.query["kind"], !Vocabulary.isValidKind(kind) {
            throw .badRequest("invalid_parameter", "kind must be a report kind such as view_frame_mismatch, got \(kind.prefix(40))")
        }
        // Default range: the release's traffic, or the app's last 7 days.
        let span = release.map { ($0.firstSeen, $0.lastSeen) } ?? (clock() - 7 * 86_400_000, clock())
        let from = try Self.time(request.query["from"], name: "from") ?? span.0
        let to = try Self.time(request.query["to"], name: "to") ?? span.1
        var firstBucket = Self.floorDiv(Self.floorDiv(from, 3_600_000), hoursPerBucket)
        let lastBucket = Self.floorDiv(Self.floorDiv(to, 3_600_000), hoursPerBucket)
        // A longer range keeps its latest buckets, and says so.
        let truncated = lastBucket - firstBucket >= Int64(Self.maximumBuckets)
        if truncated { firstBucket = lastBucket - Int64(Self.maximumBuckets) + 1 }
        // `from` after `to`: an empty range, no buckets and nothing to read.
        let count = max(0, Int(lastBucket - firstBucket + 1))
        let rows = count == 0 ? [] : try storeCall {
            try store.hourly(app: app, release: release?.release, kind: request.query["kind"],
                             fromHour: firstBucket * hoursPerBucket, toHour: (lastBucket + 1) * hoursPerBucket - 1)
        }
        var series: [String: [Int]] = [:]
        var suspect: [String: [Int]] = [:]
        if let kind = request.query["kind"] {
            series[kind] = Array(repeating: 0, count: count)
            suspect[kind] = Array(repeating: 0, count: count)
        }
        for row in rows {
            let index = Int(Self.floorDiv(row.hour, hoursPerBucket) - firstBucket)
            guard index >= 0, index < count else { continue }
            series[row.kind, default: Array(repeating: 0, count: count)][index] += row.reports
            suspect[row.kind, default: Array(repeating: 0, count: count)][index] += row.suspectReports
        }
        let buckets = (0..<count).map { Timestamp.format(milliseconds: (firstBucket + Int64($0)) * hoursPerBucket * 3_600_000) }
        return JSONBody.response(TimeseriesView(app: app, release: release.map { ReleaseID.text($0.release) }, bucket: bucketName,
                                                buckets: buckets, series: series, suspectSeries: suspect, truncated: truncated))
    }

    func keyboard(app: String, request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let releases = try compare.releases(of: app)
        let release = try request.query["release"].map { text throws(APIError) in try ReleaseResolver(releases: releases).resolve(text, parameter: "release") }
        let rows = try storeCall { try store.keyboardHeights(app: app, release: release?.release) }
        var groups: [[String]: [HeightRow]] = [:]
        for row in rows { groups[[row.model, row.mode, row.inputMode], default: []].append(row) }
        var views = groups.map { key, rows in KeyboardGroupView(model: key[0], mode: key[1], inputMode: key[2], rows: rows) }
        // Two clusters for one model and mode that differ by input mode (216 vs 252 pt):
        // a layout that hard-codes one height is wrong for the other.
        for index in views.indices {
            let siblings = views.filter { $0.model == views[index].model && $0.mode == views[index].mode && $0.inputMode != views[index].inputMode }
            let others = siblings.filter { abs($0.median - views[index].median) >= 10 }
            if !others.isEmpty {
                views[index].heightDiffersByInputMode = others.map(\.inputMode).sorted()
            }
        }
        views.sort { $0.reports != $1.reports ? $0.reports > $1.reports : ($0.model, $0.mode, $0.inputMode) < ($1.model, $1.mode, $1.inputMode) }
        return JSONBody.response(KeyboardView(app: app, release: release.map { ReleaseID.text($0.release) }, groups: views))
    }

    private var store: any TelemetryStore { compare.store }

    static func time(_ text: String?, name: String) throws(APIError) -> Int64? {
        guard let text else { return nil }
        if let milliseconds = Timestamp.parseMilliseconds(text) { return milliseconds }
        if let milliseconds = Timestamp.parseMilliseconds(text + "T00:00:00Z") { return milliseconds }
        throw .badRequest("invalid_parameter", "\(name) must be an RFC 3339 time or a date (2026-11-20), got \(text.prefix(40))")
    }

    static func floorDiv(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : (value - divisor + 1) / divisor
    }
}

struct TimeseriesView: Encodable {
    var app: String
    @NullWhenAbsent var release: String? = nil
    var bucket: String
    /// Start of each bucket, UTC.
    var buckets: [String]
    /// Headline reports per kind, one count per bucket (zero-filled).
    var series: [String: [Int]]
    /// Reports from inactive/background, per kind, one count per bucket.
    var suspectSeries: [String: [Int]]
    /// The range asked for had more than 5,000 buckets: these are its latest 5,000.
    var truncated: Bool

    enum CodingKeys: String, CodingKey {
        case app, release, bucket, buckets, series, truncated
        case suspectSeries = "suspect_series"
    }
}

struct KeyboardGroupView: Encodable {
    var model: String
    var mode: String
    var inputMode: String
    var reports: Int
    var min: Int
    var median: Int
    var max: Int
    /// Reports whose keyboard height was ≥ 90 % of the window's (the zero-frame bug).
    var windowSizedReports: Int
    var outlier: Bool
    var outlierReason: String?
    /// Input modes of the same model and mode whose median differs by ≥ 10 pt.
    var heightDiffersByInputMode: [String]?

    init(model: String, mode: String, inputMode: String, rows: [HeightRow]) {
        self.model = model
        self.mode = mode
        self.inputMode = inputMode
        let sorted = rows.sorted { $0.height < $1.height }
        reports = sorted.reduce(0) { $0 + $1.reports }
        min = sorted.first?.height ?? 0
        max = sorted.last?.height ?? 0
        var seen = 0
        median = sorted.last?.height ?? 0
        for row in sorted {
            seen += row.reports
            if seen * 2 >= reports {
                median = row.height
                break
            }
        }
        windowSizedReports = sorted.reduce(0) { $0 + $1.windowSized }
        outlier = windowSizedReports > 0
        outlierReason = outlier ? "\(windowSizedReports) report(s) with a keyboard height ≥ 90 % of the window: the zero frame of an undocked or dragged iPad keyboard taken as docked" : nil
    }

    enum CodingKeys: String, CodingKey {
        case model, mode, reports, min, median, max, outlier
        case inputMode = "input_mode"
        case windowSizedReports = "window_sized_reports"
        case outlierReason = "outlier_reason"
        case heightDiffersByInputMode = "height_differs_by_input_mode"
    }
}

struct KeyboardView: Encodable {
    var app: String
    @NullWhenAbsent var release: String? = nil
    var groups: [KeyboardGroupView]

    enum CodingKeys: String, CodingKey { case app, release, groups }
}
