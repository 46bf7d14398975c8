import Foundation

/// A batch as posted: `{"reports": [...]}` or `{"sessions": [...]}`, each item decoded on its
/// own so that one malformed item does not hide the good ones next to it.
public struct DecodedBatch<Item: JSONItemDecodable>: Sendable {
    /// One entry per posted item, in order: the item, or why it could not be read.
    public var items: [DecodedItem<Item>]
    /// The JSON of the top-level member `decode` was asked for besides the items (a batch's
    /// `client_dropped`), when present.
    public var member: ArraySlice<UInt8>?
}

/// One item of a batch: decoded (with the exact JSON bytes the client sent for it), or refused
/// with the id it had, if any was readable.
public enum DecodedItem<Item: Sendable>: Sendable {
    case decoded(Item, json: ArraySlice<UInt8>)
    case undecodable(id: String?, error: ErrorDetail)
}

/// Reads batches and turns decoding failures into messages that name the field.
public enum BatchDecoder {
    /// Decodes `{"<key>": [...]}`, and finds the top-level `member` on the same pass.
    ///
    /// - Throws: `ErrorDetail` with code `invalid_json` when the body is not JSON (or not
    ///   UTF-8), `invalid_shape` when `key` is missing or not an array, `too_many_items` past `limit`.
    public static func decode<Item: JSONItemDecodable>(
        _ type: Item.Type, key: String, from body: [UInt8], limit: Int = Limits.itemsPerBatch, member: String? = nil
    ) throws(ErrorDetail) -> DecodedBatch<Item> {
        // The standard library's validation reads ASCII a word at a time (the String it makes is dropped).
        guard String(validating: body, as: UTF8.self) != nil else {
            throw ErrorDetail(code: "invalid_json", message: "the body is not valid UTF-8; JSON must be UTF-8 (RFC 8259 §8.1)")
        }
        let split: JSONBatchSplitter.Split
        do {
            split = try JSONBatchSplitter.split(key, in: body, member: member)
        } catch {
            switch error {
            case .malformed(let reason, let offset):
                throw ErrorDetail(code: "invalid_json", message: "the body is not valid JSON: \(reason) at byte \(offset)")
            case .shape:
                throw ErrorDetail(code: "invalid_shape", message: "the body must be a JSON object {\"\(key)\": [...]} with an array of at most \(limit) objects")
            }
        }
        let ranges = split.elements
        guard ranges.count <= limit else {
            throw ErrorDetail(code: "too_many_items", message: "\(key) has \(ranges.count) items; send at most \(limit) per request")
        }
        let items = ranges.map { range -> DecodedItem<Item> in
            let json = body[range]
            guard json.count <= Limits.itemBytes else {
                return .undecodable(id: nil, error: ErrorDetail(code: "item_too_large", message: "the item is \(json.count) bytes; one item may be at most \(Limits.itemBytes) bytes"))
            }
            let tape: JSONTape
            do throws(JSONReader.Failure) {
                tape = try JSONReader.tape(of: body, in: range)
            } catch {
                return .undecodable(id: nil, error: ErrorDetail(code: "invalid_json", message: "the item is not valid JSON: \(error.reason) at byte \(range.lowerBound + error.offset)"))
            }
            do throws(ErrorDetail) {
                return .decoded(try Item(json: JSONItem(tape: tape, index: 0)), json: json)
            } catch {
                var id: String?
                if tape.entries[0].kind == .object, let value = tape.member("id", of: 0), tape.entries[value].kind == .string {
                    id = String(tape.string(at: value).prefix(Limits.idLength))
                }
                return .undecodable(id: id, error: error)
            }
        }
        return DecodedBatch(items: items, member: split.member.map { body[$0] })
    }

}
