import Foundation

/// A batch as posted: `{"reports": [...]}` or `{"sessions": [...]}`, each item decoded on its
/// own so that one malformed item does not hide the good ones next to it.
public struct DecodedBatch<Item: Decodable & Sendable>: Sendable {
    /// One entry per posted item, in order: the item, or why it could not be read.
    public var items: [DecodedItem<Item>]
}

/// One item of a batch: decoded, or refused with the id it had (if any was readable).
public enum DecodedItem<Item: Sendable>: Sendable {
    case decoded(Item)
    case undecodable(id: String?, error: ErrorDetail)
}

/// Reads batches and turns decoding failures into messages that name the field.
public enum BatchDecoder {
    /// Decodes `{"<key>": [...]}`.
    ///
    /// - Throws: `ErrorDetail` with code `invalid_json` when the body is not JSON,
    ///   `invalid_shape` when `key` is missing or not an array, `too_many_items` past `limit`.
    public static func decode<Item: Decodable & Sendable>(
        _ type: Item.Type, key: String, from body: [UInt8], limit: Int = Limits.itemsPerBatch
    ) throws(ErrorDetail) -> DecodedBatch<Item> {
        guard !transcode(body.makeIterator(), from: UTF8.self, to: UTF32.self, stoppingOnError: true, into: { _ in }) else {
            throw ErrorDetail(code: "invalid_json", message: "the body is not valid UTF-8; JSON must be UTF-8 (RFC 8259 §8.1)")
        }
        let decoder = JSONDecoder()
        decoder.userInfo[batchKeyInfo] = key
        let envelope: Envelope<Item>
        do {
            envelope = try decoder.decode(Envelope<Item>.self, from: Data(body))
        } catch let error as ErrorDetail {
            throw error
        } catch let DecodingError.dataCorrupted(context) where context.codingPath.isEmpty {
            throw ErrorDetail(code: "invalid_json", message: "the body is not valid JSON: \(describe(context.underlyingError) ?? context.debugDescription)")
        } catch {
            throw ErrorDetail(code: "invalid_shape", message: "the body must be a JSON object {\"\(key)\": [...]} with an array of at most \(limit) objects")
        }
        guard envelope.items.count <= limit else {
            throw ErrorDetail(code: "too_many_items", message: "\(key) has \(envelope.items.count) items; send at most \(limit) per request")
        }
        return DecodedBatch(items: envelope.items.map(\.value))
    }

    /// A decoding failure as `field must be ...`, relative to the item.
    static func message(for error: Error, droppingPrefix prefix: Int = 0) -> ErrorDetail {
        func fieldPath(_ path: [CodingKey]) -> String { BatchDecoder.fieldPath(Array(path.dropFirst(prefix))) }
        guard let decodingError = error as? DecodingError else {
            return ErrorDetail(code: "invalid_field", message: "\(error)")
        }
        switch decodingError {
        case let .keyNotFound(key, context):
            let path = fieldPath(context.codingPath + [key])
            return ErrorDetail(code: "missing_field", message: "\(path) is required")
        case let .valueNotFound(type, context):
            let path = fieldPath(context.codingPath)
            return ErrorDetail(code: "missing_field", message: "\(path) is required and must be \(typeName(type)), got null")
        case let .typeMismatch(type, context):
            let path = fieldPath(context.codingPath)
            return ErrorDetail(code: "invalid_type", message: "\(path.isEmpty ? "the item" : path) must be \(typeName(type))")
        case let .dataCorrupted(context):
            let path = fieldPath(context.codingPath)
            return ErrorDetail(code: "invalid_field", message: "\(path.isEmpty ? "the item" : path) is not valid: \(context.debugDescription)")
        @unknown default:
            return ErrorDetail(code: "invalid_field", message: "\(decodingError)")
        }
    }

    static func fieldPath(_ path: [CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }

    static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Double.Type, is Float.Type: return "a number"
        case is Int.Type, is Int64.Type: return "an integer"
        case is Bool.Type: return "true or false"
        case is [Any].Type: return "an array"
        default:
            let name = "\(type)"
            if name.hasPrefix("Array") { return "an array" }
            if name.hasPrefix("Dictionary") { return "an object" }
            return "an object"
        }
    }

    private static func describe(_ error: Error?) -> String? {
        guard let error else { return nil }
        let text = "\(error)"
        return text.count > 200 ? String(text.prefix(200)) : text
    }
}

private let batchKeyInfo = CodingUserInfoKey(rawValue: "watchdog.batchKey")!

private struct DynamicKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

private struct Envelope<Item: Decodable & Sendable>: Decodable {
    var items: [LossyItem<Item>]

    init(from decoder: Decoder) throws {
        let key = decoder.userInfo[batchKeyInfo] as? String ?? "reports"
        let container = try decoder.container(keyedBy: DynamicKey.self)
        items = try container.decode([LossyItem<Item>].self, forKey: DynamicKey(stringValue: key))
    }
}

/// Decodes one item without failing the array it sits in.
private struct LossyItem<Item: Decodable & Sendable>: Decodable {
    var value: DecodedItem<Item>

    private struct IdProbe: Decodable {
        var id: String?
        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: DynamicKey.self)
            id = try? container.decodeIfPresent(String.self, forKey: DynamicKey(stringValue: "id"))
        }
    }

    init(from decoder: Decoder) throws {
        let id = (try? IdProbe(from: decoder))?.id
        do {
            value = .decoded(try Item(from: decoder))
        } catch {
            var detail = BatchDecoder.message(for: error, droppingPrefix: decoder.codingPath.count)
            if (try? decoder.container(keyedBy: DynamicKey.self)) == nil {
                detail = ErrorDetail(code: "invalid_type", message: "each item must be a JSON object")
            }
            value = .undecodable(id: id.map { String($0.prefix(Limits.idLength)) }, error: detail)
        }
    }
}
