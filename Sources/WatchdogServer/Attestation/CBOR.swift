/// A CBOR value (RFC 8949) of the few kinds App Attest's attestation objects and assertions
/// are made of: unsigned and negative integers, byte strings, text strings, arrays and maps.
///
/// `CBOR.decode` is deliberately small and strict, since its input comes from any client:
/// definite lengths only (indefinite-length items, tags, floats and simple values are refused),
/// nesting at most `Limits.depth` deep, at most `Limits.items` elements per array or map, and
/// every length checked against the bytes that remain before anything is read or allocated.
/// The whole input must be exactly one item.
enum CBOR: Equatable, Sendable {
    case unsigned(UInt64)
    /// The value -1 - n.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    /// Keys in the order they came; a key repeated is refused.
    case map([(key: CBOR, value: CBOR)])

    /// What decoding accepts.
    struct Limits: Sendable {
        /// Input bytes, in all.
        var size = 64 * 1024
        /// Arrays and maps inside one another.
        var depth = 8
        /// Elements of one array, or pairs of one map.
        var items = 64

        init() {}
    }

    /// Why bytes are not one acceptable CBOR item; `offset` is where decoding stopped.
    struct DecodingError: Error, Equatable, Sendable {
        var reason: String
        var offset: Int
    }

    static func decode(_ bytes: [UInt8], limits: Limits = Limits()) throws(DecodingError) -> CBOR {
        guard bytes.count <= limits.size else { throw DecodingError(reason: "longer than \(limits.size) bytes", offset: 0) }
        var reader = Reader(bytes: bytes, limits: limits)
        let value = try reader.item(depth: 0)
        guard reader.offset == bytes.count else { throw DecodingError(reason: "bytes after the item", offset: reader.offset) }
        return value
    }

    /// The value of a text key of a map (`nil` for other values and absent keys).
    subscript(key: String) -> CBOR? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key == .text(key) }?.value
    }

    var byteString: [UInt8]? {
        if case .bytes(let bytes) = self { return bytes }
        return nil
    }

    var textString: String? {
        if case .text(let text) = self { return text }
        return nil
    }

    static func == (lhs: CBOR, rhs: CBOR) -> Bool {
        switch (lhs, rhs) {
        case (.unsigned(let a), .unsigned(let b)), (.negative(let a), .negative(let b)): a == b
        case (.bytes(let a), .bytes(let b)): a == b
        case (.text(let a), .text(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.map(let a), .map(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        let limits: Limits
        var offset = 0

        mutating func item(depth: Int) throws(DecodingError) -> CBOR {
            let (major, argument) = try head()
            switch major {
            case 0: return .unsigned(argument)
            case 1: return .negative(argument)
            case 2: return .bytes(try take(argument))
            case 3:
                let start = offset
                let raw = try take(argument)
                guard let text = String(validating: raw, as: UTF8.self) else { throw DecodingError(reason: "text string is not UTF-8", offset: start) }
                return .text(text)
            case 4:
                let count = try elements(argument, depth: depth)
                var values: [CBOR] = []
                values.reserveCapacity(count)
                for _ in 0..<count { values.append(try item(depth: depth + 1)) }
                return .array(values)
            case 5:
                let count = try elements(argument, depth: depth)
                var pairs: [(key: CBOR, value: CBOR)] = []
                pairs.reserveCapacity(count)
                for _ in 0..<count {
                    let at = offset
                    let key = try item(depth: depth + 1)
                    guard !pairs.contains(where: { $0.key == key }) else { throw DecodingError(reason: "map key repeated", offset: at) }
                    pairs.append((key, try item(depth: depth + 1)))
                }
                return .map(pairs)
            default:
                throw DecodingError(reason: major == 6 ? "tags are not accepted" : "floats and simple values are not accepted", offset: offset - 1)
            }
        }

        /// The initial byte's major type and its argument (definite lengths only).
        private mutating func head() throws(DecodingError) -> (UInt8, UInt64) {
            guard offset < bytes.count else { throw DecodingError(reason: "ends inside an item", offset: offset) }
            let initial = bytes[offset]
            offset += 1
            let major = initial >> 5, info = initial & 0x1f
            if major >= 6 { return (major, 0) }
            switch info {
            case 0...23: return (major, UInt64(info))
            case 24...27:
                let width = 1 << Int(info - 24)
                guard bytes.count - offset >= width else { throw DecodingError(reason: "ends inside an item's length", offset: offset) }
                var value: UInt64 = 0
                for byte in bytes[offset..<offset + width] { value = value << 8 | UInt64(byte) }
                offset += width
                return (major, value)
            case 31: throw DecodingError(reason: "indefinite lengths are not accepted", offset: offset - 1)
            default: throw DecodingError(reason: "reserved additional information \(info)", offset: offset - 1)
            }
        }

        private mutating func take(_ length: UInt64) throws(DecodingError) -> [UInt8] {
            guard length <= UInt64(bytes.count - offset) else {
                throw DecodingError(reason: "a string of \(length) bytes where \(bytes.count - offset) remain", offset: offset)
            }
            let end = offset + Int(length)
            defer { offset = end }
            return Array(bytes[offset..<end])
        }

        private func elements(_ count: UInt64, depth: Int) throws(DecodingError) -> Int {
            guard depth < limits.depth else { throw DecodingError(reason: "nested deeper than \(limits.depth)", offset: offset) }
            guard count <= UInt64(limits.items) else { throw DecodingError(reason: "\(count) elements, more than \(limits.items)", offset: offset) }
            return Int(count)
        }
    }
}
