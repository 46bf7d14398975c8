import Foundation
import WatchdogWire

/// Any JSON value, for documents whose keys are checked by hand (config, merge patches).
///
/// Which JSON model to use when (the same rule is in `docs/architecture.md`):
///
/// - **`JSONNode`** (WatchdogWire, from `JSONReader`): the parse tree of untrusted bytes —
///   ingest batches and anything read with the strict reader. Read, never built or encoded.
/// - **`JSONValue`** (this type): open documents whose keys are checked one by one so each
///   error names its key — the config document, merge patches, rule `set`s, small request
///   bodies (`{"version": N}`). Parsed with `JSONValue.parse` (the strict reader), never
///   with `JSONDecoder`; embedded in a view where a response carries such a document.
/// - **Codable views** (`…View: Encodable`, encoded by `JSONBody`): every response of a fixed
///   shape. A response is not assembled from `JSONValue.object` literals.
/// - **Spliced bytes**: only where the JSON already exists as bytes — a report as the client
///   sent it (drill-down, export) — or on the ingest writer's thread, where two counts are
///   spliced into a `rejected` list encoded beforehand. Inserted text goes through
///   `JSONText.quoted` or an encoder, never string interpolation of untrusted text.
enum JSONValue: Codable, Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            if value == value.rounded(), abs(value) < 1e15 { try container.encode(Int64(value)) } else { try container.encode(value) }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// Parses JSON bytes with the same strict reader as ingest (duplicate keys, `1e999` and
    /// trailing garbage refused); `nil` when they are not JSON.
    static func parse(_ bytes: [UInt8]) -> JSONValue? {
        guard let node = try? JSONReader.parse(bytes) else { return nil }
        return JSONValue(node)
    }

    init(_ node: JSONNode) {
        switch node {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .number(let value): self = .number(value)
        case .string(let value): self = .string(value)
        case .array(let elements): self = .array(elements.map(JSONValue.init))
        case .object(let members): self = .object(Dictionary(members.map { ($0.0, JSONValue($0.1)) }, uniquingKeysWith: { first, _ in first }))
        }
    }

    /// A short text form for error messages.
    var brief: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .number(let value): return value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        case .string(let value): return "\"\(value.count > 40 ? String(value.prefix(40)) + "…" : value)\""
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
