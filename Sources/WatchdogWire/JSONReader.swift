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
/// Written for the ingest path, where Foundation's `JSONDecoder` cost half of the CPU time. It
/// writes a `JSONTape` (no `String` or array per value); `parse` turns that into a tree for
/// callers that want one.
public struct JSONReader {
    public struct Failure: Error, Equatable, Sendable {
        public var reason: String
        public var offset: Int
    }

    public static let maximumDepth = 64

    private let bytes: UnsafeBufferPointer<UInt8>
    /// Where `bytes` starts in the tape's input: entries' ranges are of the whole input.
    private let base: Int
    private var position: Int
    private var entries: [JSONTape.Entry] = []
    private var unescaped: [UInt8] = []
    /// The keys of the objects being read, innermost last: a summary of each key (`keyHash`)
    /// and its entry. A nested object's keys are removed when it ends.
    private var openKeys: [(hash: UInt64, entry: Int)] = []
    /// Values read at most (each takes one entry, a member two): see `tape(of:in:dense:)`.
    private var valueLimit = Int.max
    private var values = 0

    private init(bytes: UnsafeBufferPointer<UInt8>, base: Int) {
        self.bytes = bytes
        self.base = base
        self.position = 0
    }

    /// Parses one JSON value filling all of `input` (whitespace around it allowed).
    public static func parse<Bytes: Collection>(_ input: Bytes) throws(Failure) -> JSONNode where Bytes.Element == UInt8 {
        let bytes = Array(input)
        return try tape(of: bytes, in: 0..<bytes.count).node(at: 0)
    }

    /// Parses the JSON value filling `range` of `input` into a tape. Failure offsets are from
    /// the start of `range`.
    ///
    /// - Parameter dense: whether to go on past one value per 8 bytes. A report has one per
    ///   13–22 bytes (with its member names, one entry per 8–12), and entries for one per 8
    ///   bytes are allocated at once (32 bytes each: 4 per input byte); without `dense`, a denser
    ///   input (`[1,1,1,…]`) fails instead of taking up to 16 bytes of tape per input byte, and
    ///   its reader takes another way.
    static func tape(of input: [UInt8], in range: Range<Int>, dense: Bool = true) throws(Failure) -> JSONTape {
        // The tape keeps positions in 32 bits.
        guard input.count < Int(Int32.max) else { throw Failure(reason: "the input is too large (2 GiB or more)", offset: 0) }
        let result = input.withUnsafeBufferPointer { all -> Result<([JSONTape.Entry], [UInt8]), Failure> in
            var reader = JSONReader(bytes: UnsafeBufferPointer(rebasing: all[range]), base: range.lowerBound)
            reader.entries.reserveCapacity(range.count / 8 + 4)
            if !dense { reader.valueLimit = range.count / 8 + 2 }
            return reader.readAll().map { (reader.entries, reader.unescaped) }
        }
        let (entries, unescaped) = try result.value()
        return JSONTape(entries: entries, bytes: input, unescaped: unescaped)
    }

    /// Checks that `buffer` is one JSON value (whitespace around it allowed), keeping nothing.
    static func validate(_ buffer: UnsafeBufferPointer<UInt8>) throws(Failure) {
        var reader = JSONReader(bytes: buffer, base: 0)
        try reader.readAll().value()
    }

    private mutating func readAll() -> Result<Void, Failure> {
        do throws(Failure) {
            skipWhitespace()
            try parseValue(depth: 0)
            skipWhitespace()
            guard position == bytes.count else { throw failure("unexpected data after the value") }
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    private func failure(_ reason: String) -> Failure {
        Failure(reason: reason, offset: position)
    }

    /// Appends a value without contents (`end` is the next entry).
    private mutating func append(_ kind: JSONTape.Entry.Kind, number: Double = 0) {
        entries.append(JSONTape.Entry(kind: kind, end: entries.count + 1, number: number))
    }

    private mutating func parseValue(depth: Int) throws(Failure) {
        guard position < bytes.count else { throw failure("unexpected end of input") }
        values += 1
        guard values <= valueLimit else { throw failure("more values than the reader was asked to hold") }
        switch bytes[position] {
        case UInt8(ascii: "{"): try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): try parseString(key: false)
        case UInt8(ascii: "t"): try literal("true"); append(.trueValue)
        case UInt8(ascii: "f"): try literal("false"); append(.falseValue)
        case UInt8(ascii: "n"): try literal("null"); append(.null)
        default: append(.number, number: try parseNumber())
        }
    }

    private mutating func parseObject(depth: Int) throws(Failure) {
        guard depth <= Self.maximumDepth else { throw failure("nested deeper than \(Self.maximumDepth) levels") }
        let object = entries.count
        entries.append(JSONTape.Entry(kind: .object, start: base + position, end: object + 1))
        position += 1
        var count = 0
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            position += 1
            entries[object].close = base + position
            return
        }
        // Duplicates: each key is compared with the object's keys before it whose summary
        // (`keyHash`) it shares; past 64 members, by a set of the keys instead.
        let firstKey = openKeys.count
        defer { openKeys.removeSubrange(firstKey...) }
        var seen: Set<String>?
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw failure("expected a member name in quotes") }
            let keyStart = position
            let key = entries.count
            try parseString(key: true)
            if count < 64 {
                let hash = keyHash(key)
                for earlier in openKeys[firstKey...] where earlier.hash == hash || earlier.hash == 0 || hash == 0 {
                    if sameKey(earlier.entry, key) { position = keyStart; throw duplicate(key) }
                }
                openKeys.append((hash, key))
                if count == 63 { seen = Set(openKeys[firstKey...].map { string(at: $0.entry) }) }
            } else if seen?.insert(string(at: key)).inserted == false {
                position = keyStart
                throw duplicate(key)
            }
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw failure("expected : after a member name") }
            position += 1
            skipWhitespace()
            try parseValue(depth: depth)
            count += 1
            entries[object].count = count
            entries[object].end = entries.count
            skipWhitespace()
            guard let next = peek() else { throw failure("unexpected end of input in an object") }
            position += 1
            if next == UInt8(ascii: "}") {
                entries[object].close = base + position
                return
            }
            guard next == UInt8(ascii: ",") else { position -= 1; throw failure("expected , or } in an object") }
        }
    }

    private func duplicate(_ key: Int) -> Failure {
        failure("duplicate key \"\(string(at: key).prefix(64))\"")
    }

    /// A summary of an ASCII key's bytes, never 0 — its length, first six bytes and last byte:
    /// equal keys have equal summaries, and the keys of one object rarely share one, so the
    /// bytes are compared only then. 0 for a key with other bytes, which only `String`'s `==`
    /// can compare (canonical equivalence).
    private func keyHash(_ key: Int) -> UInt64 {
        let entry = entries[key]
        guard entry.ascii else { return 0 }
        func summary(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
            var hash = UInt64(truncatingIfNeeded: bytes.count) << 56 | 1
            for index in 0..<min(bytes.count, 6) { hash ^= UInt64(bytes[index]) << (8 * index) }
            if let last = bytes.last { hash ^= UInt64(last) << 48 }
            return hash == 0 ? 1 : hash
        }
        if entry.escaped {
            return unescaped.withUnsafeBufferPointer { summary(UnsafeBufferPointer(rebasing: $0[entry.start..<entry.start + entry.count])) }
        }
        return summary(UnsafeBufferPointer(rebasing: bytes[entry.start - base..<entry.start - base + entry.count]))
    }

    /// What `JSONTape.string(at:)` and `sameKey` answer, while the tape is still being written.
    private func string(at index: Int) -> String {
        let entry = entries[index]
        if entry.escaped { return String(decoding: unescaped[entry.start..<entry.start + entry.count], as: UTF8.self) }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[entry.start - base..<entry.start - base + entry.count]), as: UTF8.self)
    }

    private func sameKey(_ a: Int, _ b: Int) -> Bool {
        let first = entries[a], second = entries[b]
        guard first.ascii && second.ascii else { return string(at: a) == string(at: b) }
        guard first.count == second.count else { return false }
        if !first.escaped && !second.escaped {
            return ByteScan.equal(UnsafeBufferPointer(rebasing: bytes[first.start - base..<first.start - base + first.count]),
                                  UnsafeBufferPointer(rebasing: bytes[second.start - base..<second.start - base + second.count]))
        }
        return string(at: a) == string(at: b)
    }

    private mutating func parseArray(depth: Int) throws(Failure) {
        guard depth <= Self.maximumDepth else { throw failure("nested deeper than \(Self.maximumDepth) levels") }
        let array = entries.count
        entries.append(JSONTape.Entry(kind: .array, start: base + position, end: array + 1))
        position += 1
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            position += 1
            entries[array].close = base + position
            return
        }
        while true {
            skipWhitespace()
            try parseValue(depth: depth)
            entries[array].count += 1
            entries[array].end = entries.count
            skipWhitespace()
            guard let next = peek() else { throw failure("unexpected end of input in an array") }
            position += 1
            if next == UInt8(ascii: "]") {
                entries[array].close = base + position
                return
            }
            guard next == UInt8(ascii: ",") else { position -= 1; throw failure("expected , or ] in an array") }
        }
    }

    /// Appends the string at `position` (its opening quote). A key's entry says whether it is
    /// ASCII, for `sameKey`.
    private mutating func parseString(key: Bool) throws(Failure) {
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
                    let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
                    entries.append(JSONTape.Entry(kind: .string, ascii: key && ByteScan.isASCII(text), start: base + start, count: index - start, end: entries.count + 1))
                    return
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
        let first = unescaped.count
        unescaped.append(contentsOf: bytes[start..<position])
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                let text = unescaped[first...]
                let ascii = key && text.withContiguousStorageIfAvailable(ByteScan.isASCII) ?? false
                entries.append(JSONTape.Entry(kind: .string, escaped: true, ascii: ascii, start: first, count: unescaped.count - first, end: entries.count + 1))
                return
            case UInt8(ascii: "\\"):
                position += 1
                guard let escape = peek() else { throw failure("unterminated escape") }
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): unescaped.append(escape)
                case UInt8(ascii: "b"): unescaped.append(0x08)
                case UInt8(ascii: "f"): unescaped.append(0x0C)
                case UInt8(ascii: "n"): unescaped.append(0x0A)
                case UInt8(ascii: "r"): unescaped.append(0x0D)
                case UInt8(ascii: "t"): unescaped.append(0x09)
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
                    unescaped.append(contentsOf: Array(String(Character(scalar)).utf8))
                default:
                    throw failure("invalid escape \\\(Character(Unicode.Scalar(escape)))")
                }
            default:
                guard byte >= 0x20 else { throw failure("control character in a string; escape it") }
                unescaped.append(byte)
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
