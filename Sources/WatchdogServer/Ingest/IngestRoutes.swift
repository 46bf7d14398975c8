import WatchdogHTTP
import WatchdogStore
import WatchdogWire

/// `POST /v1/reports` and `POST /v1/sessions`: validate each item on its own, store the good
/// ones through the group-commit writer, answer `202` once they are committed. The stored body
/// of each item is its JSON exactly as the client sent it.
struct IngestRoutes: Sendable {
    let queue: IngestQueue
    let clock: @Sendable () -> Int64
    /// Called after a commit that stored test crashes, with them (per install) and the UTC day
    /// they arrived on: the config's budget adds them, on the writer's thread, in O(batch).
    let afterTestCrashes: @Sendable ([TestCrashCount], Int64) -> Void
    let limits: IngestLimits
    let metrics: ServerMetrics
    let trustedProxies: Set<String>
    let admission: AdmissionService
    let attestation: AttestationService
    let cardinality: CardinalityRegistry

    func post<Item: IngestItem>(_ type: Item.Type, _ request: HTTPRequest, principal: Principal, responder: PendingResponse) throws(APIError) {
        guard let app = principal.app else {
            throw .forbidden("posting \(Item.batchKey) needs an app's ingest key, not a \(principal.role.rawValue) token")
        }
        let client = Self.client(of: request, trusting: trustedProxies)
        try attestation.refusals.counting(app: app, kind: .upload) { () throws(APIError) in try limits.check(key: principal.credentialID, address: client, now: clock()) }
        try requireJSON(request)
        // Before anything is decoded: under `require`, an upload without a valid assertion
        // costs one signature check at most.
        let upload = try attestation.refusals.counting(app: app, kind: .upload) { () throws(APIError) in try attestation.check(request, app: app) }
        if upload.mode == .observe, upload.installID == nil { attestation.refusals.record(app: app, kind: .wouldRefuse, code: "assertion_required") }
        let batch: DecodedBatch<Item>
        let isReports = Item.batchKey == Report.batchKey
        do {
            batch = try BatchDecoder.decode(Item.self, key: Item.batchKey, from: request.body, member: isReports ? ClientDropped.key : nil)
        } catch { throw .from(error) }
        var clientDropped: ClientDropped?
        if isReports {
            do { clientDropped = try ClientDropped.read(batch.member) } catch { throw .from(error) }
        }
        let now = clock()
        let validator = ReportValidator(nowMilliseconds: now)
        let settings = admission.settings(app: app)
        let network = ClientNetwork.of(client)
        var records: [Item.Record] = []
        var rejected: [RejectedItem] = []
        var wrongApp = 0
        for (index, item) in batch.items.enumerated() {
            switch item {
            case .undecodable(let id, let error):
                rejected.append(RejectedItem(index: index, id: id, error: error))
            case .decoded(let value, let json):
                do throws(ErrorDetail) {
                    var record = try value.record(validator: validator, json: json)
                    guard record.app == app else {
                        wrongApp += 1
                        rejected.append(RejectedItem(index: index, id: record.id, error: Self.wrongAppError(record.app, keyApp: app)))
                        continue
                    }
                    if upload.mode != .off, let refusal = upload.refusal(installID: record.installID) {
                        rejected.append(RejectedItem(index: index, id: record.id, error: refusal))
                        continue
                    }
                    record.prepare(admission, settings: settings, network: network, attested: upload.attests, now: now)
                    records.append(record)
                } catch {
                    rejected.append(RejectedItem(index: index, id: String(value.id.prefix(Limits.idLength)), error: error))
                }
            }
        }
        Item.Record.fold(&records, by: cardinality)
        if !batch.items.isEmpty, wrongApp == batch.items.count {
            throw .forbidden("every item is for another app than this ingest key's (\(app)); nothing was stored")
        }
        let rejectedCodes = rejected.map(\.error.code)
        // Items refused for their install's attestation count once per upload and code.
        for code in Set(rejectedCodes) where code.hasPrefix("assertion_") { attestation.refusals.record(app: app, kind: .upload, code: code) }
        let metrics = self.metrics
        // A signed request goes to the store even with nothing to store: its counter moves on
        // there, so the same assertion is refused next time whatever its items come to.
        guard !records.isEmpty || clientDropped != nil || upload.assertion != nil else {
            metrics.ingested(kind: Item.batchKey, accepted: 0, duplicates: 0, rejectedCodes: rejectedCodes)
            responder.respond(JSONBody.response(status: 202, IngestResult(accepted: 0, duplicates: 0, rejected: rejected)))
            return
        }
        // Encoded here, on libmicrohttpd's thread: the writer thread, which bounds ingest, only
        // splices in two numbers.
        let rejectedJSON = (try? JSONBody.encode(rejected)) ?? Array("[]".utf8)
        let hasTestCrashes = records.contains { $0.isTestCrash }
        let afterTestCrashes = self.afterTestCrashes
        let refusals = attestation.refusals
        do {
            var stored = Item.batch(records, receivedAt: now)
            stored.assertion = upload.assertion
            if let dropped = clientDropped, case .reports(let reports, _) = stored.items {
                let drops = ClientDropRecord(id: dropped.id?.lowercased(), app: app, version: dropped.release.version.nfc, build: dropped.release.build.nfc,
                                             evicted: dropped.evicted, quarantined: dropped.quarantined)
                stored.items = .reports(reports, clientDrops: drops)
            }
            try queue.submit(stored) { result in
                switch result {
                case .success(.stored(let counts)):
                    metrics.ingested(kind: Item.batchKey, accepted: counts.accepted, duplicates: counts.duplicates, rejectedCodes: rejectedCodes)
                    if hasTestCrashes, !counts.testCrashes.isEmpty { afterTestCrashes(counts.testCrashes, now / 86_400_000) }
                    let body = Array("{\"accepted\":\(counts.accepted),\"duplicates\":\(counts.duplicates),\"rejected\":".utf8) + rejectedJSON + [UInt8(ascii: "}")]
                    responder.respond(JSONBody.response(status: 202, bytes: body))
                case .success(.counterNotIncreasing):
                    // Decided in the store's transaction: counted here, with the other upload refusals.
                    refusals.record(app: app, kind: .upload, code: "assertion_counter_replayed")
                    responder.respond(AttestationError.counterNotIncreasing.apiError.response)
                case .failure(let error):
                    if let unreachable = APIError.storeUnreachable(from: error) {
                        metrics.outage.refusals.increment()
                        responder.respond(unreachable.response)
                        return
                    }
                    responder.respond(APIError.unavailable("the store could not commit the batch; nothing of it was acknowledged, retry later").response)
                }
            }
        } catch {
            switch error {
            case .full: throw .overloaded("the ingest queue is full (\(queue.capacity) items waiting); retry after a second")
            case .stopped: throw .overloaded("the server is shutting down; retry shortly")
            case .unreachable(let state):
                throw .storeUnreachable("lost \(StoreOutage.seconds(state.unreachableForSeconds)) s ago: \(state.failure ?? "connection lost")")
            }
        }
    }

    /// Who a request says it is from, as far as this server can tell.
    enum Origin: Equatable {
        /// The connection's own address (no trusted proxy, or no `X-Forwarded-For`).
        case direct(String)
        /// A trusted proxy named this address.
        case forwarded(String)
        /// A trusted proxy sent an `X-Forwarded-For` whose last entry is no address (`ip:port`,
        /// `[v6]:port`, `unknown`, empty): the proxy's own address stands for it.
        case unparsable(proxy: String)
    }

    /// The client's address: the connection's, or — from a trusted proxy — the last entry of
    /// `X-Forwarded-For`: the one the proxy itself saw; earlier ones are the client's word. Every
    /// line of the header is read, in order, as one list (RFC 9110 §5.3): a client's own line
    /// before the proxy's cannot pick its network. An entry that is not an address counts as
    /// the proxy's own address — one network, whose limits apply — never as none.
    static func client(of request: HTTPRequest, trusting proxies: Set<String>) -> String {
        switch origin(of: request, trusting: proxies) {
        case .direct(let address), .forwarded(let address), .unparsable(proxy: let address): address
        }
    }

    static func origin(of request: HTTPRequest, trusting proxies: Set<String>) -> Origin {
        guard proxies.contains(request.clientAddress) else { return .direct(request.clientAddress) }
        let lines = request.headers.fields.filter { $0.name == "x-forwarded-for" }.map(\.value)
        guard !lines.isEmpty else { return .direct(request.clientAddress) }
        let last = lines.joined(separator: ",").split(separator: ",", omittingEmptySubsequences: false).last?.trimmingCharacters(in: " \t") ?? ""
        guard last.utf8.count <= 64, ClientNetwork.of(last) != nil else { return .unparsable(proxy: request.clientAddress) }
        return .forwarded(last)
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
