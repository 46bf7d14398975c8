/// What a client had to drop without the server seeing it: items evicted from a full outbox
/// (oldest first) and items quarantined because the server refused their batch as a whole
/// and bisection pinned it on them. Sent as the optional top-level `client_dropped` member
/// of a `POST /v1/reports` body, counted per release by the server.
///
/// ```json
/// {"reports": [...], "client_dropped": {"id": "…", "release": {"version": "14.2.0", "build": "31245"},
///                                       "evicted": 12, "quarantined": 1}}
/// ```
///
/// `id` (optional) makes the count idempotent: the server counts one `id` once, so a batch
/// re-sent after a lost answer is not counted twice.
public struct ClientDropped: Codable, Hashable, Sendable {
    /// Counted once per id by the server (a UUID).
    public var id: String?
    /// The release of the dropped items.
    public var release: Release
    /// Items evicted from the outbox because it was full.
    public var evicted: Int
    /// Items set aside because the server refused them.
    public var quarantined: Int

    /// Counts for one release; `id` (a UUID) makes them idempotent.
    public init(id: String? = nil, release: Release, evicted: Int, quarantined: Int) {
        self.id = id
        self.release = release
        self.evicted = evicted
        self.quarantined = quarantined
    }

    /// The top-level key in a reports batch.
    public static let key = "client_dropped"
    /// The largest count accepted.
    public static let maximumCount = 1_000_000_000

    /// Reads and validates `client_dropped`: its JSON as `BatchDecoder.decode(…, member: key)`
    /// found it. Returns `nil` when it is absent or `null`.
    ///
    /// - Throws: `ErrorDetail` with code `invalid_client_dropped` naming the field.
    public static func read(_ json: ArraySlice<UInt8>?) throws(ErrorDetail) -> ClientDropped? {
        guard let json else { return nil }
        let tape: JSONTape
        do throws(JSONReader.Failure) {
            let bytes = Array(json)
            tape = try JSONReader.tape(of: bytes, in: 0..<bytes.count)
        } catch {
            throw ErrorDetail(code: "invalid_client_dropped", message: "\(key) is not valid JSON: \(error.reason)")
        }
        if tape.entries[0].kind == .null { return nil }
        do throws(ErrorDetail) {
            var reader = try ObjectReader(JSONItem(tape: tape, index: 0), path: key)
            let dropped = ClientDropped(
                id: try reader.optionalString("id"), release: try Release(reader.object("release")),
                evicted: try count(&reader, "evicted"), quarantined: try count(&reader, "quarantined")
            )
            try ReportValidator.checkClientDropped(dropped)
            return dropped
        } catch {
            throw ErrorDetail(code: "invalid_client_dropped", message: error.message)
        }
    }

    private static func count(_ reader: inout ObjectReader, _ field: StaticString) throws(ErrorDetail) -> Int {
        guard let value = try reader.optionalInt(field) else {
            throw ErrorDetail(code: "missing_field", message: "\(reader.field(field)) is required")
        }
        guard value >= 0, value <= maximumCount else {
            throw ErrorDetail(code: "invalid_field", message: "\(reader.field(field)) must be an integer from 0 to \(maximumCount), got \(value)")
        }
        return value
    }
}
