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
        guard ByteScan.isValidUTF8(body) else {
            throw ErrorDetail(code: "invalid_json", message: "the body is not valid UTF-8; JSON must be UTF-8 (RFC 8259 §8.1)")
        }
        if let batch = try decodeWhole(Item.self, key: key, from: body, limit: limit, member: member) { return batch }
        return try decodeSplit(Item.self, key: key, from: body, limit: limit, member: member)
    }

    /// The batch split first (`JSONBatchSplitter`), then each item parsed on its own.
    static func decodeSplit<Item: JSONItemDecodable>(
        _ type: Item.Type, key: String, from body: [UInt8], limit: Int, member: String?
    ) throws(ErrorDetail) -> DecodedBatch<Item> {
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
        guard ranges.count <= limit else { throw tooMany(ranges.count, key: key, limit: limit) }
        let items = ranges.map { range -> DecodedItem<Item> in
            guard range.count <= Limits.itemBytes else { return tooLarge(range.count) }
            let tape: JSONTape
            do throws(JSONReader.Failure) {
                tape = try JSONReader.tape(of: body, in: range)
            } catch {
                return .undecodable(id: nil, error: ErrorDetail(code: "invalid_json", message: "the item is not valid JSON: \(error.reason) at byte \(range.lowerBound + error.offset)"))
            }
            return decode(Item.self, tape, 0, json: body[range])
        }
        return DecodedBatch(items: items, member: split.member.map { body[$0] })
    }

    /// The batch read in one pass, when the whole body is JSON whose items are all objects and
    /// whose `member`, if any, is an object — what clients send: the body is parsed once into
    /// one tape and each item read from it. `nil` for anything else, which the splitter then
    /// reads item by item (one malformed item must not hide the others), with the errors it
    /// has always given: this path answers only what that one would answer.
    static func decodeWhole<Item: JSONItemDecodable>(
        _ type: Item.Type, key: String, from body: [UInt8], limit: Int, member: String?
    ) throws(ErrorDetail) -> DecodedBatch<Item>? {
        // The splitter matches top-level names as sent (an escaped name is another member).
        // Not for a body denser than one value per 8 bytes (a report has one per 13–22): its
        // tape would take up to 16 bytes per body byte; the splitter reads it instead.
        guard let tape = try? JSONReader.tape(of: body, in: 0..<body.count, dense: false), tape.entries[0].kind == .object,
              let array = tape.member(sentAs: key, of: 0), tape.entries[array].kind == .array else { return nil }
        var memberBytes: ArraySlice<UInt8>?
        if let member, let value = tape.member(sentAs: member, of: 0) {
            guard tape.entries[value].kind == .object else { return nil }
            memberBytes = body[tape.entries[value].start..<tape.entries[value].close]
        }
        let count = tape.entries[array].count
        guard count <= limit else { throw tooMany(count, key: key, limit: limit) }
        var elements: [Int] = []
        elements.reserveCapacity(count)
        var element = array + 1
        for _ in 0..<count {
            guard tape.entries[element].kind == .object else { return nil }
            elements.append(element)
            element = tape.entries[element].end
        }
        let items = elements.map { element -> DecodedItem<Item> in
            let range = tape.entries[element].start..<tape.entries[element].close
            guard range.count <= Limits.itemBytes else { return tooLarge(range.count) }
            return decode(Item.self, tape, element, json: body[range])
        }
        return DecodedBatch(items: items, member: memberBytes)
    }

    /// The item at `index` of `tape`, or why it cannot be read (with its id, when it has one).
    private static func decode<Item: JSONItemDecodable>(_ type: Item.Type, _ tape: JSONTape, _ index: Int, json: ArraySlice<UInt8>) -> DecodedItem<Item> {
        do throws(ErrorDetail) {
            return .decoded(try Item(json: JSONItem(tape: tape, index: index)), json: json)
        } catch {
            var id: String?
            if tape.entries[index].kind == .object, let value = tape.member("id", of: index), tape.entries[value].kind == .string {
                id = String(tape.string(at: value).prefix(Limits.idLength))
            }
            return .undecodable(id: id, error: error)
        }
    }

    private static func tooMany(_ count: Int, key: String, limit: Int) -> ErrorDetail {
        ErrorDetail(code: "too_many_items", message: "\(key) has \(count) items; send at most \(limit) per request")
    }

    private static func tooLarge<Item>(_ count: Int) -> DecodedItem<Item> {
        .undecodable(id: nil, error: ErrorDetail(code: "item_too_large", message: "the item is \(count) bytes; one item may be at most \(Limits.itemBytes) bytes"))
    }
}
