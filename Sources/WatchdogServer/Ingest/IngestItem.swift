import WatchdogStore
import WatchdogWire

/// What `POST /v1/reports` and `POST /v1/sessions` have in common: a batch key, validation,
/// and the flat record the store keeps (with the item's JSON exactly as sent).
protocol IngestItem: JSONItemDecodable {
    associatedtype Record: IngestRecord
    static var batchKey: String { get }
    var id: String { get }
    func record(validator: ReportValidator, json: ArraySlice<UInt8>) throws(ErrorDetail) -> Record
    static func batch(_ records: [Record], receivedAt: Int64) -> IngestBatch
}

/// A stored item's identity, for the app check.
protocol IngestRecord: Sendable {
    var id: String { get }
    var app: String { get }
}

extension ReportRecord: IngestRecord {}
extension SessionRecord: IngestRecord {}

extension Report: IngestItem {
    static let batchKey = "reports"

    func record(validator: ReportValidator, json: ArraySlice<UInt8>) throws(ErrorDetail) -> ReportRecord {
        let valid = try validator.validate(self)
        let report = valid.report
        return ReportRecord(
            id: report.id, app: report.app, version: report.release.version, build: report.release.build,
            channel: report.release.channel, kind: report.kind, occurredAt: valid.occurredAtMilliseconds,
            sessionID: report.sessionId, installID: report.installId, isSuspect: report.appState != "active",
            screen: report.screen, autoFixed: report.action?.autoFixed ?? false,
            testCrash: report.action?.testCrash ?? false, body: String(decoding: json, as: UTF8.self)
        )
    }

    static func batch(_ records: [ReportRecord], receivedAt: Int64) -> IngestBatch {
        .reports(records, receivedAt: receivedAt)
    }
}

extension SessionStart: IngestItem {
    static let batchKey = "sessions"

    func record(validator: ReportValidator, json: ArraySlice<UInt8>) throws(ErrorDetail) -> SessionRecord {
        let valid = try validator.validate(self)
        let session = valid.session
        return SessionRecord(
            id: session.id, app: session.app, version: session.release.version, build: session.release.build,
            channel: session.release.channel, installID: session.installId, startedAt: valid.startedAtMilliseconds,
            body: String(decoding: json, as: UTF8.self)
        )
    }

    static func batch(_ records: [SessionRecord], receivedAt: Int64) -> IngestBatch {
        .sessions(records, receivedAt: receivedAt)
    }
}
