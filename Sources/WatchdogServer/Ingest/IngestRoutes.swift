import Foundation
import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// `POST /v1/reports` and `POST /v1/sessions`: validate each item on its own, store the good
/// ones through the group-commit writer, answer `202` once they are committed.
struct IngestRoutes: Sendable {
    let queue: IngestQueue
    let clock: @Sendable () -> Int64

    func postReports(_ request: HTTPRequest, principal: Principal, responder: HTTPResponder) throws(APIError) {
        let app = try ingestApp(of: principal)
        try requireJSON(request)
        let batch: DecodedBatch<Report>
        do { batch = try BatchDecoder.decode(Report.self, key: "reports", from: request.body) } catch { throw .from(error) }
        let now = clock()
        let validator = ReportValidator(nowMilliseconds: now)
        var records: [ReportRecord] = []
        var rejected: [RejectedItem] = []
        var wrongApp = 0
        for (index, item) in batch.items.enumerated() {
            switch item {
            case .undecodable(let id, let error):
                rejected.append(RejectedItem(index: index, id: id, error: error))
            case .decoded(let report, let json):
                do throws(ErrorDetail) {
                    let valid = try validator.validate(report)
                    guard valid.report.app == app else {
                        wrongApp += 1
                        rejected.append(RejectedItem(index: index, id: valid.report.id, error: Self.wrongAppError(valid.report.app, keyApp: app)))
                        continue
                    }
                    records.append(record(for: valid, json: json))
                } catch {
                    rejected.append(RejectedItem(index: index, id: String(report.id.prefix(Limits.idLength)), error: error))
                }
            }
        }
        try store(.reports(records, receivedAt: now), total: batch.items.count, wrongApp: wrongApp, rejected: rejected, app: app, responder: responder)
    }

    func postSessions(_ request: HTTPRequest, principal: Principal, responder: HTTPResponder) throws(APIError) {
        let app = try ingestApp(of: principal)
        try requireJSON(request)
        let batch: DecodedBatch<SessionStart>
        do { batch = try BatchDecoder.decode(SessionStart.self, key: "sessions", from: request.body) } catch { throw .from(error) }
        let now = clock()
        let validator = ReportValidator(nowMilliseconds: now)
        var records: [SessionRecord] = []
        var rejected: [RejectedItem] = []
        var wrongApp = 0
        for (index, item) in batch.items.enumerated() {
            switch item {
            case .undecodable(let id, let error):
                rejected.append(RejectedItem(index: index, id: id, error: error))
            case .decoded(let session, let json):
                do throws(ErrorDetail) {
                    let valid = try validator.validate(session)
                    guard valid.session.app == app else {
                        wrongApp += 1
                        rejected.append(RejectedItem(index: index, id: valid.session.id, error: Self.wrongAppError(valid.session.app, keyApp: app)))
                        continue
                    }
                    let s = valid.session
                    records.append(SessionRecord(id: s.id, app: s.app, version: s.release.version, build: s.release.build, channel: s.release.channel, installID: s.installId, startedAt: valid.startedAtMilliseconds, body: String(decoding: json, as: UTF8.self)))
                } catch {
                    rejected.append(RejectedItem(index: index, id: String(session.id.prefix(Limits.idLength)), error: error))
                }
            }
        }
        try store(.sessions(records, receivedAt: now), total: batch.items.count, wrongApp: wrongApp, rejected: rejected, app: app, responder: responder)
    }

    /// The stored body is the item exactly as the client sent it (already validated by decoding).
    private func record(for valid: ValidatedReport, json: ArraySlice<UInt8>) -> ReportRecord {
        let report = valid.report
        return ReportRecord(
            id: report.id, app: report.app, version: report.release.version, build: report.release.build,
            channel: report.release.channel, kind: report.kind, occurredAt: valid.occurredAtMilliseconds,
            sessionID: report.sessionId, installID: report.installId, isSuspect: report.appState != "active",
            screen: report.screen, autoFixed: report.action?.autoFixed ?? false,
            testCrash: report.action?.testCrash ?? false,
            body: String(decoding: json, as: UTF8.self)
        )
    }

    private func store(_ batch: IngestBatch, total: Int, wrongApp: Int, rejected: [RejectedItem], app: String, responder: HTTPResponder) throws(APIError) {
        if total > 0, wrongApp == total {
            throw .forbidden("every item is for another app than this ingest key's (\(app)); nothing was stored")
        }
        guard batch.count > 0 else {
            responder.respond(JSONBody.response(status: 202, IngestResult(accepted: 0, duplicates: 0, rejected: rejected)))
            return
        }
        do {
            try queue.submit(batch) { result in
                switch result {
                case .success(let counts):
                    responder.respond(JSONBody.response(status: 202, IngestResult(accepted: counts.accepted, duplicates: counts.duplicates, rejected: rejected)))
                case .failure:
                    responder.respond(APIError.unavailable("the store could not commit the batch; nothing of it was acknowledged, retry later").response)
                }
            }
        } catch {
            switch error {
            case .full: throw .overloaded("the ingest queue is full (\(queue.capacity) items waiting); retry after a second")
            case .stopped: throw .overloaded("the server is shutting down; retry shortly")
            }
        }
    }

    private func ingestApp(of principal: Principal) throws(APIError) -> String {
        guard principal.role == .ingest, let app = principal.app else {
            throw .forbidden("posting reports and sessions needs an app's ingest key, not a \(principal.role.rawValue) token")
        }
        return app
    }

    private func requireJSON(_ request: HTTPRequest) throws(APIError) {
        guard let contentType = request.headers["content-type"] else { return }
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: " \t").lowercased() } ?? ""
        guard mediaType == "application/json" || mediaType.hasSuffix("+json") else {
            throw .unsupportedMediaType(contentType)
        }
    }

    static func wrongAppError(_ app: String, keyApp: String) -> ErrorDetail {
        let shown = app.count > 64 ? String(app.prefix(64)) + "…" : app
        return ErrorDetail(code: "wrong_app", message: "app is \"\(shown)\" but this ingest key posts only for \(keyApp)")
    }
}
