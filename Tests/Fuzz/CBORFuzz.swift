// libFuzzer entry point over the App Attest CBOR decoder and authenticator data reader
// (Sources/WatchdogServer/Attestation/CBOR.swift, AuthenticatorData.swift), built by
// Tests/Fuzz/run.sh with `swiftc -sanitize=fuzzer,address` outside `swift build`.
//
// A crash, a sanitizer report, a trap or a broken invariant is a finding; refusing the input
// with a DecodingError is the expected outcome for most inputs.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var limits = CBOR.Limits()
    limits.size = 4096
    guard let value = try? CBOR.decode(bytes, limits: limits) else {
        _ = AuthenticatorData(bytes, attested: true)
        return 0
    }
    precondition(depth(value) <= limits.depth + 1, "depth bound not enforced")
    // Decoding what the value encodes to gives the value back (lengths may have been written
    // longer than needed; the value may not change).
    let again = try? CBOR.decode(encode(value), limits: CBOR.Limits())
    precondition(again == value, "decode(encode(value)) != value")
    // What the verifiers read of an attestation object or an assertion.
    for key in ["authData", "authenticatorData"] {
        if let data = value[key]?.byteString {
            if let parsed = AuthenticatorData(data, attested: key == "authData") {
                precondition(parsed.rpIDHash.count == 32, "rp id hash is not 32 bytes")
                precondition((parsed.credentialID?.count ?? 0) <= data.count, "credential id longer than authData")
            }
        }
    }
    if case .array(let chain)? = value["attStmt"]?["x5c"] { _ = chain.compactMap(\.byteString) }
    return 0
}

private func depth(_ value: CBOR) -> Int {
    switch value {
    case .array(let values): 1 + (values.map(depth).max() ?? 0)
    case .map(let pairs): 1 + (pairs.map { max(depth($0.key), depth($0.value)) }.max() ?? 0)
    default: 0
    }
}

private func encode(_ value: CBOR) -> [UInt8] {
    func head(_ major: UInt8, _ argument: UInt64) -> [UInt8] {
        [major << 5 | 27] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: argument >> (8 * UInt64($0))) }
    }
    switch value {
    case .unsigned(let number): return head(0, number)
    case .negative(let number): return head(1, number)
    case .bytes(let bytes): return head(2, UInt64(bytes.count)) + bytes
    case .text(let text): return head(3, UInt64(text.utf8.count)) + Array(text.utf8)
    case .array(let values): return head(4, UInt64(values.count)) + values.flatMap(encode)
    case .map(let pairs): return head(5, UInt64(pairs.count)) + pairs.flatMap { encode($0.key) + encode($0.value) }
    }
}
