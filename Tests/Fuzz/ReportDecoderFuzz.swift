// libFuzzer entry point over the ingest decoder and validator (Sources/WatchdogWire), built by
// Tests/Fuzz/run.sh with `swiftc -sanitize=fuzzer,address` outside `swift build`.
//
// A crash, a sanitizer report, a trap (overflow, out-of-range index) or a broken invariant below
// is a finding; refusing the input with an ErrorDetail is the expected outcome for most inputs.

/// "now" for validation: fixed so that a finding reproduces from its input alone, at noon UTC of
/// the day the seed corpus's reports were written for (2026-11-20, Tests/Fixtures): the seeds'
/// valid reports are valid here too, not "more than 24 h after" a clock set two days before them.
private let validator = ReportValidator(nowMilliseconds: 1_795_176_000_000)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    decodeReports(body)
    decodeSessions(body)
    _ = try? JSONReader.parse(body)
    return 0
}

private func decodeReports(_ body: [UInt8]) {
    guard let batch = try? BatchDecoder.decode(Report.self, key: "reports", from: body) else { return }
    precondition(batch.items.count <= Limits.itemsPerBatch, "batch limit not enforced")
    for item in batch.items {
        switch item {
        case .decoded(let report, let json):
            // The stored bytes of an accepted item are themselves one JSON value.
            precondition((try? JSONReader.parse(json)) != nil, "item bytes do not re-parse")
            precondition(json.count <= Limits.itemBytes, "item size limit not enforced")
            _ = try? validator.validate(report)
        case .undecodable(let id, let error):
            precondition((id?.count ?? 0) <= Limits.idLength, "echoed id not bounded")
            precondition(!error.code.isEmpty && !error.message.isEmpty, "error without code or message")
        }
    }
}

private func decodeSessions(_ body: [UInt8]) {
    guard let batch = try? BatchDecoder.decode(SessionStart.self, key: "sessions", from: body) else { return }
    for case .decoded(let session, _) in batch.items {
        _ = try? validator.validate(session)
    }
}
