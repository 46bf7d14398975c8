import Foundation
import Locking
import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// Drill-down: `GET /v1/apps/{app}/reports`, `GET /v1/reports/{id}`, and the streamed
/// `GET /v1/apps/{app}/reports.ndjson`. Reports come newest first by arrival; the cursor is
/// the arrival sequence of the last one seen, so reports arriving meanwhile never shift a page
/// (no gaps, no repeats).
struct ReportRoutes: Sendable {
    let lookup: ReleaseLookup
    let exports = ExportSlots()

    private var store: any TelemetryStore { lookup.store }

    func list(app: String, request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let filter = try self.filter(app: app, request: request)
        let limit = try ReleaseLookup.limit(request.query["limit"], default: 50, maximum: 500)
        let before = try request.query["cursor"].map { text throws(APIError) in try Cursor.decode(text) }
        let page = try storeCall { try store.reports(app: app, filter: filter, before: before, limit: limit + 1) }
        let shown = page.prefix(limit)
        var body = Array(#"{"reports":["#.utf8)
        for (index, report) in shown.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body += ReportJSON.item(report)
        }
        body += Array(#"],"next_cursor":"#.utf8)
        body += page.count > limit ? JSONText.quoted(Cursor.encode(shown.last!.sequence)) : Array("null".utf8)
        body.append(UInt8(ascii: "}"))
        return JSONBody.response(status: 200, bytes: body)
    }

    /// `GET /v1/reports/{id}[?app=]`. Ids are unique per app: with `app`, that app's report;
    /// without, the report when one app used the id, else 409 naming the apps to choose from.
    /// Only the apps `principal` sees are searched (a report of another app is, to it, a report
    /// that does not exist), so the 409 names only apps it could list.
    func get(id: String, request: HTTPRequest, principal: Principal) throws(APIError) -> HTTPResponse {
        let app = request.query["app"]
        guard UUIDText.isValid(id) else { throw .notFound("no report \(id.prefix(64))") }
        let found = app.map(principal.sees) == false ? [] : try storeCall { try store.reports(id: id, app: app) }.filter { principal.sees($0.app) }
        guard let report = found.first else {
            throw .notFound("no report \(id.prefix(64))\(app.map { " in app \($0.prefix(255))" } ?? "")")
        }
        guard found.count == 1 else {
            throw APIError(status: 409, code: "ambiguous_report_id",
                           message: "apps \(found.map(\.app).joined(separator: ", ")) each have a report \(id); add ?app= to choose one")
        }
        return JSONBody.response(status: 200, bytes: ReportJSON.item(report))
    }

    /// The streamed export, while `credential` runs fewer than two (see `ExportSlots`).
    func export(app: String, request: HTTPRequest, credential: String) throws(APIError) -> HTTPResponse {
        let filter = try self.filter(app: app, request: request)
        let slot = try exports.acquire(for: credential)
        let file = app.filter { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" } + "-reports.ndjson"
        return HTTPResponse(status: 200, headers: [
            ("Content-Type", "application/x-ndjson; charset=utf-8"),
            ("Content-Disposition", "attachment; filename=\"\(file)\""),
            ("X-Content-Type-Options", "nosniff"),
            ("Cache-Control", "no-store"),
        ], stream: ReportExport(store: store, app: app, filter: filter, slot: slot))
    }

    /// The export's and the list's filter from the query (`release`, `kind`, `screen`, `fingerprint`).
    func filter(app: String, request: HTTPRequest) throws(APIError) -> ReportFilter {
        var filter = ReportFilter()
        filter.release = try lookup.release(request.query, "release", of: app)?.release
        // An unknown app is a 404 also without a release parameter.
        if filter.release == nil { _ = try lookup.releases(of: app) }
        if let kind = request.query["kind"] {
            guard Vocabulary.isValidKind(kind) else { throw .badRequest("invalid_parameter", "kind must be a report kind such as view_frame_mismatch, got \(kind.prefix(40))") }
            filter.kind = kind
        }
        if let screen = request.query["screen"] {
            // Characters, as the OpenAPI maxLength counts them (a stored screen is at most as many bytes).
            guard !screen.isEmpty, screen.unicodeScalars.count <= Limits.screenLength else {
                throw .badRequest("invalid_parameter", "screen must be 1–\(Limits.screenLength) characters")
            }
            filter.screen = screen
        }
        if let fingerprint = request.query["fingerprint"] {
            guard Fingerprint.isValid(fingerprint) else { throw .badRequest("invalid_parameter", "fingerprint must look like fp_0123456789abcdef, got \(fingerprint.prefix(40))") }
            filter.fingerprint = fingerprint
        }
        return filter
    }
}

/// A page cursor: opaque to clients (send back `next_cursor` as it came); it is the arrival
/// sequence of the last report shown, so any positive number is a valid position.
enum Cursor {
    static func encode(_ sequence: Int64) -> String {
        String(sequence)
    }

    static func decode(_ text: String) throws(APIError) -> Int64 {
        guard text.utf8.count <= 19, let sequence = Int64(text), sequence > 0 else {
            throw .badRequest("invalid_cursor", "cursor is not one this server gave out; start again without it")
        }
        return sequence
    }
}

/// One report as the drill-down shows it: what the server knows, and the client's JSON as sent.
enum ReportJSON {
    static func item(_ report: StoredReport) -> [UInt8] {
        var bytes = Array(#"{"id":"#.utf8) + JSONText.quoted(report.id)
        bytes += Array(#","release":"#.utf8) + JSONText.quoted(report.release.text)
        bytes += Array(#","kind":"#.utf8) + JSONText.quoted(report.kind)
        bytes += Array(#","fingerprint":"#.utf8) + JSONText.quoted(report.fingerprint)
        bytes += Array(#","occurred_at":"#.utf8) + JSONText.quoted(Timestamp.format(milliseconds: report.occurredAt))
        bytes += Array(#","received_at":"#.utf8) + JSONText.quoted(Timestamp.format(milliseconds: report.receivedAt))
        bytes += Array(#","suspect":"#.utf8) + Array((report.suspect ? "true" : "false").utf8)
        bytes += Array(#","flooded":"#.utf8) + Array((report.flooded ? "true" : "false").utf8)
        bytes += Array(#","report":"#.utf8)
        // Stored bodies are validated JSON; raw line breaks can only be insignificant whitespace
        // (inside strings they must be escaped), so one item stays one NDJSON line.
        for byte in report.body.utf8 { bytes.append(byte == 0x0A || byte == 0x0D ? 0x20 : byte) }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}

/// JSON string literals.
enum JSONText {
    static func quoted(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "\"")]
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0..<0x20: bytes += Array(String(format: "\\u%04x", byte).utf8)
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
        return bytes
    }
}

/// The NDJSON export: pages of 1,000 reports read one after another as the client downloads,
/// so memory stays flat whatever the number of reports.
final class ReportExport: HTTPBodyStream {
    private let store: any TelemetryStore
    private let app: String
    private let filter: ReportFilter
    private let cursor = Locked<(before: Int64?, done: Bool)>((nil, false))
    /// Held while the stream lives: libmicrohttpd frees the stream when the export ends or
    /// its connection goes.
    private let slot: ExportSlot
    /// Small pages: what a stalled export holds is one page, pulled only as the socket drains.
    static let pageSize = 250

    init(store: any TelemetryStore, app: String, filter: ReportFilter, slot: ExportSlot) {
        self.store = store
        self.app = app
        self.filter = filter
        self.slot = slot
    }

    func nextChunk() throws -> [UInt8]? {
        let (before, done) = cursor.withLock { $0 }
        if done { return nil }
        let page = try store.reports(app: app, filter: filter, before: before, limit: Self.pageSize)
        guard let last = page.last else {
            cursor.withLock { $0.done = true }
            return nil
        }
        cursor.withLock { $0 = (last.sequence, page.count < Self.pageSize) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(page.count * 1500)
        for report in page {
            bytes += ReportJSON.item(report)
            bytes.append(0x0A)
        }
        return bytes
    }
}
