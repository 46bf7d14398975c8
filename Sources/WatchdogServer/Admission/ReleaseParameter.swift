import WatchdogStore

/// Which release an admin route's `{release}` (or `confirm=`) names, listed or not: the
/// release's `id` from a listing (`r` + hex of `version \n build`), decoded without a look-up,
/// or its display text `VERSION (BUILD)`, split at each ` (` and kept where the app has such a
/// release. The unlisted releases can be 100,000: none of this reads them all.
struct ReleaseParameter {
    let store: any TelemetryStore
    let app: String

    /// The release `text` names; 404 when the app has no such release (listed, or with data).
    func resolve(_ text: String) throws(APIError) -> ReleaseID {
        let listed = Set(try storeCall { try store.releaseAdmissions(app: app) }.map(\.release))
        let candidates = ReleaseID(id: text).map { [$0] } ?? Self.splits(text)
        let stored = try storeCall { try store.admissionEvidence(app: app, releases: candidates.filter { !listed.contains($0) }) }
        let found = candidates.filter { listed.contains($0) || stored[$0] != nil }
        switch found.count {
        case 1:
            return found[0]
        case 0:
            guard try storeCall({ try store.appExists(app) }) else { throw .notFound("no app \(app)") }
            throw .notFound("app \(app) has no release \(text.prefix(200)); use the release's id or its VERSION (BUILD) text from GET /v1/admin/apps/\(app)/releases")
        default:
            throw .badRequest("ambiguous_release", "\(text.prefix(200)) names several releases; use one of their ids: \(found.map(\.id).joined(separator: ", "))")
        }
    }

    /// Every (version, build) whose display text is `text`.
    static func splits(_ text: String) -> [ReleaseID] {
        guard text.hasSuffix(")") else { return [] }
        let body = text.dropLast()
        var releases: [ReleaseID] = []
        var index = body.startIndex
        while let range = body[index...].range(of: " (") {
            let version = String(body[..<range.lowerBound]), build = String(body[range.upperBound...])
            if !version.isEmpty, !build.isEmpty { releases.append(ReleaseID(version: version, build: build)) }
            index = body.index(after: range.lowerBound)
        }
        return releases
    }
}

extension ReleaseID {
    /// The release an opaque `id` stands for; `nil` when `id` is not one (`ReleaseID.id`).
    init?(id: String) {
        let hex = Array(id.utf8)
        guard hex.first == UInt8(ascii: "r"), hex.count % 2 == 1, hex.count > 3 else { return nil }
        func digit(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        for index in stride(from: 1, to: hex.count, by: 2) {
            guard let high = digit(hex[index]), let low = digit(hex[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        let parts = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
              let version = String(validating: parts[0], as: UTF8.self), let build = String(validating: parts[1], as: UTF8.self) else { return nil }
        self.init(version: version, build: build)
    }
}
