import Foundation
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
    var installID: String? { get }
    /// A report of a deliberate test crash (counts against the install's daily budget).
    var isTestCrash: Bool { get }
    /// Adds what the server knows and the client cannot say: the app's admission policy and,
    /// for a session start, the network it came from, whether its time is believable and
    /// whether it carried its install's owning key's assertion (`attested`).
    mutating func prepare(_ admission: AdmissionService, settings: AdmissionSettings, network: String?, attested: Bool, now: Int64)
    /// Folds values past the cardinality caps (`CardinalityRegistry`).
    static func fold(_ records: inout [Self], by registry: CardinalityRegistry)
}

extension ReportRecord: IngestRecord {
    var isTestCrash: Bool { testCrash && installID != nil }

    mutating func prepare(_ admission: AdmissionService, settings: AdmissionSettings, network: String?, attested: Bool, now: Int64) {
        policy = settings.policy
    }
    static func fold(_ records: inout [ReportRecord], by registry: CardinalityRegistry) { registry.fold(&records) }
}

extension SessionRecord: IngestRecord {
    var isTestCrash: Bool { false }

    mutating func prepare(_ admission: AdmissionService, settings: AdmissionSettings, network: String?, attested: Bool, now: Int64) {
        admission.prepare(&self, network: network, settings: settings, now: now)
        self.attested = attested
    }
    /// Session starts carry no capped value (idiom is a closed vocabulary).
    static func fold(_ records: inout [SessionRecord], by registry: CardinalityRegistry) {}
}

extension Report: IngestItem {
    static let batchKey = "reports"

    func record(validator: ReportValidator, json: ArraySlice<UInt8>) throws(ErrorDetail) -> ReportRecord {
        let checked = try validator.check(self)
        return storeRecord(id: checked.id, occurredAt: checked.occurredAtMilliseconds, body: String(decoding: json, as: UTF8.self))
    }

    /// The flat record the store indexes and counts (`self` already checked, `id` as the check gave it). Strings that
    /// group and count are in Unicode NFC: Swift compares strings by canonical equivalence and
    /// SQLite by bytes, so `ünï` composed and decomposed must be one release, not two that
    /// merge in memory and split on disk. The body stays the client's exact bytes.
    func storeRecord(id: String, occurredAt: Int64, body: String) -> ReportRecord {
        let screen = screen?.nfc, viewName = view?.name?.nfc, keyboardMode = keyboard?.mode?.nfc
        return ReportRecord(
            id: id, app: app, version: release.version.nfc, build: release.build.nfc, channel: release.channel?.nfc, kind: kind,
            occurredAt: occurredAt, sessionID: sessionId, installID: installId?.nfc, isSuspect: appState != "active",
            screen: screen, autoFixed: action?.autoFixed ?? false, testCrash: action?.testCrash ?? false,
            fingerprint: Fingerprint.of(kind: kind, screen: screen, viewName: viewName, keyboardMode: keyboardMode),
            viewName: viewName, keyboardMode: keyboardMode, keyboardHeight: keyboard?.height, inputMode: keyboard?.inputMode?.nfc,
            deviceModel: device?.model?.nfc, idiom: device?.idiom?.nfc, windowHeight: window?.height, body: body
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
            id: session.id, app: session.app, version: session.release.version.nfc, build: session.release.build.nfc,
            channel: session.release.channel?.nfc, installID: session.installId?.nfc, startedAt: valid.startedAtMilliseconds,
            idiom: session.device?.idiom?.nfc, body: String(decoding: json, as: UTF8.self)
        )
    }

    static func batch(_ records: [SessionRecord], receivedAt: Int64) -> IngestBatch {
        .sessions(records, receivedAt: receivedAt)
    }
}

extension String {
    /// Unicode NFC (canonical composition); ASCII, the usual case, is returned as it is.
    var nfc: String {
        ByteScan.isASCII(self) ? self : precomposedStringWithCanonicalMapping
    }
}
