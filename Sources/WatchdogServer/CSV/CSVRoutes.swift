import Locking
import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// The `.csv` twins of the releases table, a comparison, the issues list and the report
/// export (`GET /v1/apps/{app}/releases.csv`, `compare.csv`, `issues.csv`, `reports.csv`):
/// the same parameters and the same rows as their JSON, as the `.ndjson` export is to the
/// report list. `bom=true` puts a UTF-8 byte-order mark first. Cells are written by `CSVText`
/// (RFC 4180, formula characters neutralised in text cells).
///
/// Releases, issues and a comparison are bounded views (at most 1,000 rows), answered whole;
/// reports are streamed a page at a time as the client reads, as the NDJSON export is, in the
/// same export slots (two per credential).
struct CSVRoutes: Sendable {
    let reads: ReadRoutes
    let compare: CompareRoutes
    let issues: IssueRoutes
    let reports: ReportRoutes

    func releases(app: String, request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let bom = try CSVTable.wantsBOM(request)
        let view = try Self.json(try reads.releases(app: app, request: request))
        var table = CSVTable()
        for release in view["releases"]?.arrayValue ?? [] { table.append(release) }
        return CSVTable.response(table.bytes(leading: ["id", "release", "version", "build", "sessions", "affected_sessions"], bom: bom),
                                 file: CSVTable.file(app: app, "releases"))
    }

    func issues(app: String, request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let bom = try CSVTable.wantsBOM(request)
        let view = try Self.json(try issues.issues(app: app, request: request))
        var table = CSVTable()
        let release = view["release"] ?? .null
        for issue in view["issues"]?.arrayValue ?? [] { table.append(issue, extra: ["release": release]) }
        return CSVTable.response(table.bytes(leading: ["release", "fingerprint", "title", "kind", "affected_sessions", "reports"], bom: bom),
                                 file: CSVTable.file(app: app, "issues"))
    }

    /// One row for all kinds (`dimension` `overall`), then one per kind, screen, keyboard mode
    /// and idiom, each with the base's and the target's figures and the verdict.
    func comparison(app: String, request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let bom = try CSVTable.wantsBOM(request)
        let view = try Self.json(try compare.compare(app: app, request: request))
        let base = view["base"]?["release"] ?? .null, target = view["target"]?["release"] ?? .null
        var table = CSVTable()
        let sides: [String: JSONValue] = ["base_release": base, "target_release": target]
        if let overall = view["overall"] { table.append(overall, extra: sides.merging(["dimension": .string("overall")]) { $1 }) }
        for (key, dimension) in [("by_kind", "kind"), ("by_screen", "screen"), ("by_keyboard_mode", "keyboard_mode"), ("by_idiom", "idiom")] {
            for row in view[key]?.arrayValue ?? [] { table.append(row, extra: sides.merging(["dimension": .string(dimension)]) { $1 }) }
        }
        return CSVTable.response(table.bytes(leading: ["base_release", "target_release", "dimension", "value", "verdict"], bom: bom),
                                 file: CSVTable.file(app: app, "compare"))
    }

    /// The streamed export, while `credential` runs fewer than two (the NDJSON export's slots).
    func reports(app: String, request: HTTPRequest, credential: String) throws(APIError) -> HTTPResponse {
        let bom = try CSVTable.wantsBOM(request)
        let filter = try reports.filter(app: app, request: request)
        let slot = try reports.exports.acquire(for: credential)
        return HTTPResponse(status: 200, headers: CSVTable.headers(file: CSVTable.file(app: app, "reports")),
                            stream: ReportCSVExport(store: reports.lookup.store, app: app, filter: filter, slot: slot, bom: bom))
    }

    /// The JSON a view's route answered, as a value.
    static func json(_ response: HTTPResponse) throws(APIError) -> JSONValue {
        guard let value = JSONValue.parse(response.body) else { throw .internalError }
        return value
    }
}

/// The report export as CSV: pages of reports read one after another as the client
/// downloads, like `ReportExport`, so memory stays flat whatever the number of reports.
final class ReportCSVExport: HTTPBodyStream {
    static let columns = ["id", "release", "kind", "fingerprint", "occurred_at", "received_at", "suspect", "flooded", "report"]

    private let store: any TelemetryStore
    private let app: String
    private let filter: ReportFilter
    private let cursor = Locked<(before: Int64?, started: Bool, done: Bool)>((nil, false, false))
    private let slot: ExportSlot
    private let bom: Bool

    init(store: any TelemetryStore, app: String, filter: ReportFilter, slot: ExportSlot, bom: Bool) {
        self.store = store
        self.app = app
        self.filter = filter
        self.slot = slot
        self.bom = bom
    }

    func nextChunk() throws -> [UInt8]? {
        let (before, started, done) = cursor.withLock { $0 }
        if done { return nil }
        var bytes: [UInt8] = []
        if !started {
            bytes = (bom ? CSVText.byteOrderMark : []) + CSVText.header(Self.columns)
            cursor.withLock { $0.started = true }
        }
        let page = try store.reports(app: app, filter: filter, before: before, limit: ReportExport.pageSize)
        guard let last = page.last else {
            cursor.withLock { $0.done = true }
            return bytes.isEmpty ? nil : bytes
        }
        cursor.withLock { $0 = (last.sequence, true, page.count < ReportExport.pageSize) }
        bytes.reserveCapacity(bytes.count + page.count * 1500)
        for report in page { bytes += CSVText.record(Self.cells(report)) }
        return bytes
    }

    /// A report's record: the server's fields, and the client's JSON as sent (as text).
    static func cells(_ report: StoredReport) -> [CSVText.Cell] {
        [.text(report.id), .text(report.release.text), .text(report.kind), .text(report.fingerprint),
         .text(Timestamp.format(milliseconds: report.occurredAt)), .text(Timestamp.format(milliseconds: report.receivedAt)),
         .bool(report.suspect), .bool(report.flooded), .text(report.body)]
    }
}
