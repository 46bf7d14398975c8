/// A parsed JSON value, as read by `JSONReader`. Objects keep their members in order as
/// key–value pairs (small objects are faster to scan than to hash).
public enum JSONNode: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONNode])
    case object([(String, JSONNode)])

    public static func == (lhs: JSONNode, rhs: JSONNode) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.bool(a), .bool(b)): a == b
        case let (.number(a), .number(b)): a == b
        case let (.string(a), .string(b)): a == b
        case let (.array(a), .array(b)): a == b
        case let (.object(a), .object(b)): a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    /// The member `key` of an object.
    public subscript(key: String) -> JSONNode? {
        guard case .object(let members) = self else { return nil }
        return members.first(where: { $0.0 == key })?.1
    }
}

/// A strict RFC 8259 parser over UTF-8 bytes: no trailing commas or comments, numbers must be
/// finite doubles (`1e999` is refused), duplicate keys are refused, nesting is bounded.
///
/// Written for the ingest path, where Foundation's `JSONDecoder` cost half of the CPU time.
public struct JSONReader {
    public struct Failure: Error, Equatable, Sendable {
        public var reason: String
        public var offset: Int
    }

    public static let maximumDepth = 64

    private let bytes: UnsafeBufferPointer<UInt8>
    private var position: Int

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        self.position = 0
    }

    /// Parses one JSON value filling all of `bytes` (whitespace around it allowed).
    public static func parse<Bytes: Collection>(_ input: Bytes) throws(Failure) -> JSONNode where Bytes.Element == UInt8 {
        let result: Result<JSONNode, Failure>? = input.withContiguousStorageIfAvailable { buffer in
            parseBuffer(buffer)
        }
        return try (result ?? Array(input).withUnsafeBufferPointer { parseBuffer($0) }).get()
    }

    private static func parseBuffer(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<JSONNode, Failure> {
        var reader = JSONReader(bytes: buffer)
        do throws(Failure) {
            reader.skipWhitespace()
            let value = try reader.parseValue(depth: 0)
            reader.skipWhitespace()
            guard reader.position == buffer.count else { throw reader.failure("unexpected data after the value") }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

    private func failure(_ reason: String) -> Failure {
        Failure(reason: reason, offset: position)
    }

    private mutating func parseValue(depth: Int) throws(Failure) -> JSONNode {
        guard position < bytes.count else { throw failure("unexpected end of input") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: return .number(try parseNumber())
        }
    }

    private mutating func parseObject(depth: Int) throws(Failure) -> JSONNode {
        guard depth <= Self.maximumDepth else { throw failure("nested deeper than \(Self.maximumDepth) levels") }
        position += 1
        var members: [(String, JSONNode)] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        var seen: Set<String>?
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw failure("expected a member name in quotes") }
            let keyStart = position
            let key = try parseString()
            // Small objects check duplicates by scanning, large ones by hashing.
            if members.count < 16 {
                if members.contains(where: { $0.0 == key }) { position = keyStart; throw failure("duplicate key \"\(key.prefix(64))\"") }
                if members.count == 15 { seen = Set(members.map(\.0) + [key]) }
            } else if seen?.insert(key).inserted == false {
                position = keyStart
                throw failure("duplicate key \"\(key.prefix(64))\"")
            }
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw failure("expected : after a member name") }
            position += 1
            skipWhitespace()
            members.append((key, try parseValue(depth: depth)))
            skipWhitespace()
            guard let next = peek() else { throw failure("unexpected end of input in an object") }
            position += 1
            if next == UInt8(ascii: "}") { return .object(members) }
            guard next == UInt8(ascii: ",") else { position -= 1; throw failure("expected , or } in an object") }
        }
    }

    private mutating func parseArray(depth: Int) throws(Failure) -> JSONNode {
        guard depth <= Self.maximumDepth else { throw failure("nested deeper than \(Self.maximumDepth) levels") }
        position += 1
        var elements: [JSONNode] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard let next = peek() else { throw failure("unexpected end of input in an array") }
            position += 1
            if next == UInt8(ascii: "]") { return .array(elements) }
            guard next == UInt8(ascii: ",") else { position -= 1; throw failure("expected , or ] in an array") }
        }
    }

    private mutating func parseString() throws(Failure) -> String {
        position += 1  // opening quote
        let start = position
        // Fast path: no escapes. Words without a quote, backslash or control character at once;
        // then the word that has one, byte by byte.
        var index = position
        let count = bytes.count
        plain: while index < count {
            index = ByteScan.skipPlainString(bytes, from: index, controls: true)
            let wordEnd = min(index + 8, count)
            while index < wordEnd {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    position = index + 1
                    return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                }
                if byte == UInt8(ascii: "\\") { break plain }
                guard byte >= 0x20 else {
                    position = index
                    throw failure("control character in a string; escape it")
                }
                index += 1
            }
        }
        position = index
        var scalars = Array(bytes[start..<position])
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return String(decoding: scalars, as: UTF8.self)
            case UInt8(ascii: "\\"):
                position += 1
                guard let escape = peek() else { throw failure("unterminated escape") }
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escape)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"):
                    var value = try hex4()
                    if (0xD800...0xDBFF).contains(value) {
                        guard peek() == UInt8(ascii: "\\"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "u") else {
                            throw failure("unpaired UTF-16 surrogate in \\u escape")
                        }
                        position += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw failure("unpaired UTF-16 surrogate in \\u escape") }
                        value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(value) {
                        throw failure("unpaired UTF-16 surrogate in \\u escape")
                    }
                    guard let scalar = Unicode.Scalar(value) else { throw failure("invalid \\u escape") }
                    scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
                default:
                    throw failure("invalid escape \\\(Character(Unicode.Scalar(escape)))")
                }
            default:
                guard byte >= 0x20 else { throw failure("control character in a string; escape it") }
                scalars.append(byte)
                position += 1
            }
        }
        throw failure("unterminated string")
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard position + 4 <= bytes.count else { throw failure("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw failure("invalid hex digit in \\u escape")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    private mutating func parseNumber() throws(Failure) -> Double {
        let start = position
        if peek() == UInt8(ascii: "-") { position += 1 }
        guard let first = peek(), first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else {
            position = start
            throw failure("unexpected character; expected a value")
        }
        var integer: Int64 = 0
        var simple = true
        if first == UInt8(ascii: "0") {
            position += 1
        } else {
            var digits = 0
            while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                if digits < 15 { integer = integer * 10 + Int64(byte - UInt8(ascii: "0")) } else { simple = false }
                digits += 1
                position += 1
            }
        }
        if peek() == UInt8(ascii: ".") {
            simple = false
            position += 1
            let fractionStart = position
            while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { position += 1 }
            guard position > fractionStart else { throw failure("digits expected after the decimal point") }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            simple = false
            position += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
            let exponentStart = position
            while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { position += 1 }
            guard position > exponentStart else { throw failure("digits expected in the exponent") }
        }
        if simple {
            return bytes[start] == UInt8(ascii: "-") ? -Double(integer) : Double(integer)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            position = start
            throw failure("number \(text.prefix(32)) is out of range")
        }
        return value
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw failure("unexpected end of input") }
        for index in 0..<count where bytes[position + index] != word.utf8Start[index] {
            throw failure("unexpected character; expected a value")
        }
        position += count
    }

    private func peek() -> UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            let byte = bytes[position]
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            position += 1
        }
    }
}
