import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// `GET /v1/apps/{app}/timeseries` and `GET /v1/apps/{app}/keyboard`.
struct SeriesRoutes: Sendable {
    let lookup: ReleaseLookup
    let clock: @Sendable () -> Int64

    static let maximumBuckets = 5_000

    func timeseries(app: String, request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let (bucketName, hoursPerBucket, kind) = try Self.bucketAndKind(request, defaultBucket: "hour")
        let release = try lookup.release(request.query, "release", of: app)
        let limit = try BreakdownCut.limit(request.query["limit"])
        // Default range: the release's traffic, or the app's last 7 days.
        let span = release.map { ($0.firstSeen, $0.lastSeen) } ?? (clock() - 7 * 86_400_000, clock())
        let from = try Self.time(request.query["from"], name: "from") ?? span.0
        let to = try Self.time(request.query["to"], name: "to") ?? span.1
        var firstBucket = Self.floorDiv(Self.floorDiv(from, 3_600_000), hoursPerBucket)
        var lastBucket = Self.floorDiv(Self.floorDiv(to, 3_600_000), hoursPerBucket)
        // A longer range keeps the buckets around the bulk of its sessions (one session dated
        // 2007 does not push the data out), or its latest without sessions; and says so.
        let truncated = lastBucket - firstBucket >= Int64(Self.maximumBuckets)
        if truncated {
            let rows = try storeCall {
                try store.hourlySessions(app: app, release: release?.release, fromHour: firstBucket * hoursPerBucket, toHour: (lastBucket + 1) * hoursPerBucket - 1)
            }
            let bulk = SessionBulk(rows.map { ($0.hour, $0.sessions) }).map { Self.floorDiv($0.start, hoursPerBucket)...Self.floorDiv($0.end, hoursPerBucket) } ?? lastBucket...lastBucket
            firstBucket = SessionBulk.windowStart(first: firstBucket, last: lastBucket, bulk: bulk, maximum: Int64(Self.maximumBuckets))
            lastBucket = firstBucket + Int64(Self.maximumBuckets) - 1
        }
        // `from` after `to`: an empty range, no buckets and nothing to read.
        let count = max(0, Int(lastBucket - firstBucket + 1))
        let fromHour = firstBucket * hoursPerBucket, toHour = (lastBucket + 1) * hoursPerBucket - 1
        let rows = count == 0 ? [] : try storeCall {
            try store.hourly(app: app, release: release?.release, kind: kind, fromHour: fromHour, toHour: toHour)
        }
        let sessionRows = count == 0 ? [] : try storeCall { try store.hourlySessions(app: app, release: release?.release, fromHour: fromHour, toHour: toHour) }
        var series: [String: [Int]] = [:]
        var suspect: [String: [Int]] = [:]
        var flooded: [String: [Int]] = [:]
        var affectedByKind: [String: [Int]] = [:]
        if let kind {
            series[kind] = Array(repeating: 0, count: count)
            suspect[kind] = Array(repeating: 0, count: count)
            flooded[kind] = Array(repeating: 0, count: count)
        }
        for row in rows {
            let index = Int(Self.floorDiv(row.hour, hoursPerBucket) - firstBucket)
            guard index >= 0, index < count else { continue }
            series[row.kind, default: Array(repeating: 0, count: count)][index] += row.reports
            suspect[row.kind, default: Array(repeating: 0, count: count)][index] += row.suspectReports
            flooded[row.kind, default: Array(repeating: 0, count: count)][index] += row.floodedReports
            affectedByKind[row.kind, default: Array(repeating: 0, count: count)][index] += row.affectedSessions
        }
        let otherKinds = kind == nil ? BreakdownCut.cut(series: &series, suspect: &suspect, flooded: &flooded, limit: limit) : 0
        var sessions = Array(repeating: 0, count: count), affected = Array(repeating: 0, count: count)
        for row in sessionRows {
            let index = Int(Self.floorDiv(row.hour, hoursPerBucket) - firstBucket)
            if index >= 0, index < count {
                sessions[index] += row.sessions
                affected[index] += row.affectedSessions
            }
        }
        let rates = series.mapValues { counts in Self.rates(counts, sessions: sessions) }
        // Shares of the kinds kept by the cut: a session affected by two of the kinds summed
        // under x-other would count twice there, so x-other has none.
        var shares: [String: [Double?]] = [:]
        for kind in series.keys where kind != Folded.kind {
            shares[kind] = Self.shares(affectedByKind[kind] ?? Array(repeating: 0, count: count), sessions: sessions)
        }
        let now = clock()
        let bucketMilliseconds = hoursPerBucket * 3_600_000
        let buckets = (0..<count).map { Timestamp.format(milliseconds: (firstBucket + Int64($0)) * bucketMilliseconds) }
        // The bucket holding now is still filling: say so, so it is not read as a drop.
        let partial = (0..<count).filter { index in
            let start = (firstBucket + Int64(index)) * bucketMilliseconds
            return start <= now && now < start + bucketMilliseconds
        }
        return JSONBody.response(writing: TimeseriesView(app: app, release: release?.release.text, bucket: bucketName, buckets: buckets, series: series,
                                                suspectSeries: suspect, floodedSeries: flooded, sessions: sessions, rates: rates,
                                                affectedSessions: affected, shares: shares, partialBuckets: partial, truncated: truncated, otherKinds: otherKinds))
    }

    /// Reports per 1,000 sessions started in the same bucket; `nil` where none started.
    static func rates(_ counts: [Int], sessions: [Int]) -> [Double?] {
        zip(counts, sessions).map { count, sessions in sessions > 0 ? Double(count) * 1000 / Double(sessions) : nil }
    }

    /// The share of sessions with a glitch: sessions first affected in a bucket over the
    /// sessions started in it (0…1, at most 1: a session started late in the bucket before and
    /// affected in this one is counted here); `nil` where none started.
    static func shares(_ affected: [Int], sessions: [Int]) -> [Double?] {
        zip(affected, sessions).map { affected, sessions in sessions > 0 ? min(1, Double(affected) / Double(sessions)) : nil }
    }

    /// `bucket=` and `kind=` of the time series.
    private static func bucketAndKind(_ request: HTTPRequest, defaultBucket: String) throws(APIError) -> (String, Int64, String?) {
        let bucketName = request.query["bucket"] ?? defaultBucket
        guard bucketName == "hour" || bucketName == "day" else {
            throw .badRequest("invalid_parameter", "bucket must be hour or day, got \(bucketName.prefix(20))")
        }
        let kind = request.query["kind"]
        if let kind, !Vocabulary.isValidKind(kind) {
            throw .badRequest("invalid_parameter", "kind must be a report kind such as view_frame_mismatch, got \(kind.prefix(40))")
        }
        return (bucketName, bucketName == "day" ? 24 : 1, kind)
    }

    /// `GET /v1/apps/{app}/overlay?base=&target=`: two releases side by side, each from the
    /// bucket its bulk of sessions starts in (`SessionBulk`), so day 3 of one release lines up
    /// with day 3 of the other however early an outlying session is dated.
    func overlay(app: String, request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let (bucketName, hoursPerBucket, kind) = try Self.bucketAndKind(request, defaultBucket: "day")
        guard let base = try lookup.release(request.query, "base", of: app), let target = try lookup.release(request.query, "target", of: app) else {
            throw .badRequest("missing_parameter", "an overlay needs base and target: /overlay?base=14.1.0 (31102)&target=14.2.0 (31245)&bucket=day")
        }
        let now = clock()
        let nowBucket = Self.floorDiv(Self.floorDiv(now, 3_600_000), hoursPerBucket)
        var lines: [OverlayLine] = []
        var length = 0
        var truncated = false
        var starts: [(release: ReleaseStats, role: String, hours: [HourlySessionsRow], start: Int64?, kept: Bool)] = []
        for (release, role) in [(base, "base"), (target, "target")] {
            let hours = try storeCall { try store.hourlySessions(app: app, release: release.release, fromHour: Int64.min, toHour: Int64.max) }
            let bulkStart = try self.bulkStart(app: app, release: release.release, hours: hours)
            let start = bulkStart.map { Self.floorDiv($0.hour, hoursPerBucket) }
            starts.append((release, role, hours, start, bulkStart?.kept ?? false))
            if let start {
                let lastData = Self.floorDiv(Self.floorDiv(release.lastSeen, 3_600_000), hoursPerBucket)
                length = max(length, Int(min(max(lastData, start), nowBucket) - start + 1))
            }
        }
        if length > Self.maximumBuckets {
            length = Self.maximumBuckets
            truncated = true
        }
        for (release, role, hours, start, kept) in starts {
            let withoutHour = max(0, release.affectedSessions - hours.reduce(0) { $0 + $1.affectedSessions })
            let firstSession = hours.first(where: { $0.sessions > 0 }).map { Timestamp.format(milliseconds: Self.floorDiv($0.hour, hoursPerBucket) * hoursPerBucket * 3_600_000) }
            guard let first = start, length > 0 else {
                var line = OverlayLine(role: role, release: release.release, firstSession: firstSession, alignedStart: nil, sessions: [], reports: [], rates: [], partial: [])
                line.affectedSessionsWithoutHour = withoutHour
                lines.append(line)
                continue
            }
            let fromHour = first * hoursPerBucket, toHour = (first + Int64(length)) * hoursPerBucket - 1
            let counts = try storeCall { try store.hourly(app: app, release: release.release, kind: kind, fromHour: Int64.min, toHour: toHour) }
            var reports = Array(repeating: 0, count: length), sessions = Array(repeating: 0, count: length), affected = Array(repeating: 0, count: length)
            var before = (sessions: 0, reports: 0, affected: 0)
            // With a kind, a session counts as affected in the bucket of its first report of that kind.
            for row in counts {
                let index = Int(Self.floorDiv(row.hour, hoursPerBucket) - first)
                if index < 0 {
                    before.reports += row.reports
                    if kind != nil { before.affected += row.affectedSessions }
                } else if index < length {
                    reports[index] += row.reports
                    if kind != nil { affected[index] += row.affectedSessions }
                }
            }
            for row in hours {
                let index = Int(Self.floorDiv(row.hour, hoursPerBucket) - first)
                if index < 0 {
                    before.sessions += row.sessions
                    if kind == nil { before.affected += row.affectedSessions }
                } else if index < length {
                    sessions[index] += row.sessions
                    if kind == nil { affected[index] += row.affectedSessions }
                }
            }
            let rates = Self.rates(reports, sessions: sessions), shares = Self.shares(affected, sessions: sessions)
            // Buckets after now have no data yet: `null`, not 0.
            let future = { (index: Int) in first + Int64(index) > nowBucket }
            var line = OverlayLine(
                role: role, release: release.release, firstSession: firstSession, alignedStart: Timestamp.format(milliseconds: fromHour * 3_600_000),
                sessions: (0..<length).map { future($0) ? nil : sessions[$0] },
                reports: (0..<length).map { future($0) ? nil : reports[$0] },
                rates: (0..<length).map { future($0) ? nil : rates[$0] },
                partial: (0..<length).map { first + Int64($0) == nowBucket })
            line.affectedSessions = (0..<length).map { future($0) ? nil : affected[$0] }
            line.shares = (0..<length).map { future($0) ? nil : shares[$0] }
            line.sessionsBeforeStart = before.sessions
            line.reportsBeforeStart = before.reports
            line.affectedSessionsBeforeStart = before.affected
            line.affectedSessionsWithoutHour = withoutHour
            line.alignedStartKept = kept
            lines.append(line)
        }
        return JSONBody.response(OverlayView(app: app, bucket: bucketName, kind: kind, offsets: Array(0..<length), releases: lines, truncated: truncated))
    }

    /// The release's sessions taken off at least this many sessions in: day 0 is kept from then on.
    static let keptBulkMinimum = 50

    /// The hour the release's bulk of sessions starts in: the kept one, else `SessionBulk`'s,
    /// kept once the release has `keptBulkMinimum` counted sessions (so day N of a release
    /// stays day N as its sessions arrive). Keeping is best effort: a store that cannot write
    /// (a full or read-only disk) still answers, from the computed hour.
    private func bulkStart(app: String, release: ReleaseID, hours: [HourlySessionsRow]) throws(APIError) -> (hour: Int64, kept: Bool)? {
        if let kept = try storeCall({ try store.keptBulkStart(app: app, release: release) }) { return (kept, true) }
        guard let bulk = SessionBulk(hours.map { ($0.hour, $0.sessions) }) else { return nil }
        guard bulk.total >= Self.keptBulkMinimum else { return (bulk.start, false) }
        if let kept = try? store.keepBulkStart(app: app, release: release, hour: bulk.start) { return (kept, true) }
        return (bulk.start, false)
    }

    func keyboard(app: String, request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let release = try lookup.release(request.query, "release", of: app)
        let limit = try ReleaseLookup.limit(request.query["limit"], default: 100, maximum: BreakdownCut.maximumLimit)
        let rows = try storeCall { try store.keyboardHeights(app: app, release: release?.release) }
        var groups: [[String]: [HeightRow]] = [:]
        for row in rows { groups[[row.model, row.mode, row.inputMode], default: []].append(row) }
        var views = groups.map { key, rows in KeyboardGroupView(model: key[0], mode: key[1], inputMode: key[2], rows: rows) }
        // The `limit` groups with the most reports: whatever clients named, the answer (and the
        // sibling search below, quadratic in the groups) stays bounded.
        views.sort { $0.reports != $1.reports ? $0.reports > $1.reports : ($0.model, $0.mode, $0.inputMode) < ($1.model, $1.mode, $1.inputMode) }
        let otherGroups = max(0, views.count - limit)
        views.removeLast(otherGroups)
        // Two clusters for one model and mode that differ by input mode (216 vs 252 pt):
        // a layout that hard-codes one height is wrong for the other.
        for index in views.indices {
            let siblings = views.filter { $0.model == views[index].model && $0.mode == views[index].mode && $0.inputMode != views[index].inputMode }
            let others = siblings.filter { abs($0.median - views[index].median) >= 10 }
            if !others.isEmpty {
                views[index].heightDiffersByInputMode = others.map(\.inputMode).sorted()
            }
        }
        return JSONBody.response(KeyboardView(app: app, release: release?.release.text, groups: views, otherGroups: otherGroups))
    }

    private var store: any TelemetryStore { lookup.store }

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
    /// Reports past the per-session flood cap, per kind, one count per bucket.
    var floodedSeries: [String: [Int]]
    /// Session starts per bucket (of the release, or of the app).
    var sessions: [Int]
    /// Headline reports per 1,000 sessions started in the same bucket, per kind; `null` where none started.
    var rates: [String: [Double?]]
    /// Sessions first affected (any kind) per bucket, by the date of their first active report.
    var affectedSessions: [Int]
    /// Per kind (not `x-other`), sessions first affected by it in a bucket over the sessions
    /// started in it (0…1); `null` where none started.
    var shares: [String: [Double?]]
    /// Indexes of buckets still filling (they hold now).
    var partialBuckets: [Int]
    /// The range asked for had more than 5,000 buckets: these are the 5,000 around the bulk of
    /// its sessions (`SessionBulk`), or its latest 5,000 when it has none.
    var truncated: Bool
    /// Kinds past the top `limit` by reports, summed under `x-other` (0: none).
    var otherKinds = 0

    enum CodingKeys: String, CodingKey {
        case app, release, bucket, buckets, series, truncated, sessions, rates, shares
        case affectedSessions = "affected_sessions"
        case otherKinds = "other_kinds"
        case suspectSeries = "suspect_series"
        case floodedSeries = "flooded_series"
        case partialBuckets = "partial_buckets"
    }
}

extension TimeseriesView: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("affected_sessions", affectedSessions)
            json.member("app", app)
            json.member("bucket", bucket)
            json.member("buckets", buckets)
            json.member("flooded_series", floodedSeries)
            json.member("other_kinds", otherKinds)
            json.member("partial_buckets", partialBuckets)
            json.member("rates", rates)
            json.member("release", release)
            json.member("series", series)
            json.member("sessions", sessions)
            json.member("shares", shares)
            json.member("suspect_series", suspectSeries)
            json.member("truncated", truncated)
        }
    }
}

/// `GET /v1/apps/{app}/overlay`: two releases aligned on the start of their bulk of sessions.
struct OverlayView: Encodable {
    var app: String
    var bucket: String
    var alignedBy = "since_bulk_start"
    @NullWhenAbsent var kind: String? = nil
    /// Buckets since each release's aligned start (`aligned_start`).
    var offsets: [Int]
    var releases: [OverlayLine]
    var truncated: Bool

    enum CodingKeys: String, CodingKey {
        case app, bucket, kind, offsets, releases, truncated
        case alignedBy = "aligned_by"
    }
}

struct OverlayLine: Encodable {
    var role: String
    var release: String
    var id: String
    /// Start of the bucket of the first session start; `null` without sessions (then the arrays are empty).
    @NullWhenAbsent var firstSession: String? = nil
    /// Start of the bucket the release's bulk of sessions starts in (`SessionBulk`): offset 0.
    @NullWhenAbsent var alignedStart: String? = nil
    /// Session starts and headline reports dated before `aligned_start`: not drawn, counted here.
    var sessionsBeforeStart = 0
    var reportsBeforeStart = 0
    /// Sessions first affected (of `kind`, when given) before `aligned_start`: not drawn.
    var affectedSessionsBeforeStart = 0
    /// The release's affected sessions counted before the server recorded their hour (an
    /// upgrade from before 2026-11-28): in no bucket, so its `shares` read low by up to these.
    var affectedSessionsWithoutHour = 0
    /// Whether `aligned_start` is kept (set once the release had 50 sessions; it no longer moves).
    var alignedStartKept = false
    var sessions: [Int?]
    var reports: [Int?]
    var rates: [Double?]
    /// Sessions first affected (of `kind`, when given) per bucket, by their first report's date.
    var affectedSessions: [Int?] = []
    /// `affected_sessions` over `sessions` (0…1): the share of sessions with a glitch.
    var shares: [Double?] = []
    var partial: [Bool]

    init(role: String, release: ReleaseID, firstSession: String?, alignedStart: String?, sessions: [Int?], reports: [Int?], rates: [Double?], partial: [Bool]) {
        self.role = role
        self.release = release.text
        id = release.id
        self.firstSession = firstSession
        self.alignedStart = alignedStart
        self.sessions = sessions
        self.reports = reports
        self.rates = rates
        self.partial = partial
    }

    enum CodingKeys: String, CodingKey {
        case role, release, id, sessions, reports, rates, partial, shares
        case firstSession = "first_session"
        case affectedSessions = "affected_sessions"
        case affectedSessionsBeforeStart = "affected_sessions_before_start"
        case affectedSessionsWithoutHour = "affected_sessions_without_hour"
        case alignedStartKept = "aligned_start_kept"
        case alignedStart = "aligned_start"
        case sessionsBeforeStart = "sessions_before_start"
        case reportsBeforeStart = "reports_before_start"
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
    /// Groups past `limit` (the fewest reports), left out.
    var otherGroups: Int

    enum CodingKeys: String, CodingKey {
        case app, release, groups
        case otherGroups = "other_groups"
    }
}
