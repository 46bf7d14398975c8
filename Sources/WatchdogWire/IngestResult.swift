/// The answer to `POST /v1/reports` and `POST /v1/sessions`: `202` with this body means every
/// accepted item is committed to the store.
public struct IngestResult: Codable, Hashable, Sendable {
    /// Items stored by this request.
    public var accepted: Int
    /// Items whose id was already stored; they were not stored or counted again.
    public var duplicates: Int
    /// Items refused, each with its position in the batch and why.
    public var rejected: [RejectedItem]

    public init(accepted: Int, duplicates: Int, rejected: [RejectedItem]) {
        self.accepted = accepted
        self.duplicates = duplicates
        self.rejected = rejected
    }
}

/// One refused item of a batch.
public struct RejectedItem: Codable, Hashable, Sendable {
    public var index: Int
    /// The item's id when it had a readable one.
    public var id: String?
    public var error: ErrorDetail

    public init(index: Int, id: String?, error: ErrorDetail) {
        self.index = index
        self.id = id
        self.error = error
    }

    enum CodingKeys: String, CodingKey {
        case index, id, error
    }

    /// `id` is always present, `null` when the item had no readable id.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(index, forKey: .index)
        try container.encode(id, forKey: .id)
        try container.encode(error, forKey: .error)
    }
}

/// `{"code": "...", "message": "..."}`: the shape of every error (docs/api.md, "Errors").
public struct ErrorDetail: Codable, Hashable, Sendable, Error {
    /// A stable machine-readable code, e.g. `invalid_field`.
    public var code: String
    /// What was wrong and how to fix it, naming the field.
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }
}

/// The body of every error response: `{"error": {"code": ..., "message": ...}}`.
public struct ErrorResponse: Codable, Hashable, Sendable {
    public var error: ErrorDetail

    public init(error: ErrorDetail) {
        self.error = error
    }
}
