/// Finds the byte range of each element of one array in a JSON object, e.g. of `reports` in
/// `{"reports": [{...}, {...}]}`, without building the values.
///
/// This lets a batch be decoded item by item (one bad item cannot hide the others) and each
/// item be stored as the exact bytes the client sent, with no re-encoding. The scan checks
/// structure (objects, arrays, strings, separators) only as far as it needs to find where each
/// element ends: a bare word (`NaN`, `True`, `Infinity`), a control character inside a string
/// or nesting past `JSONReader.maximumDepth` cannot hide where an element ends, so they are
/// left to the element's own decoding, which refuses that one item with its index.
struct JSONBatchSplitter {
    enum Failure: Error, Equatable {
        /// Not JSON, with the byte offset where it went wrong.
        case malformed(String, offset: Int)
        /// JSON, but not an object with an array under the key.
        case shape(String)
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    /// Nesting deeper than this is refused (a stack-exhaustion guard for the decoder too).
    static let maximumDepth = 64

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// A batch body split: the element ranges of the array at the key, and the value range of
    /// one other top-level member when asked for and present (its first occurrence).
    struct Split: Equatable {
        var elements: [Range<Int>]
        var member: Range<Int>?
    }

    /// The element ranges of the array at `key`.
    static func elements(of key: String, in body: [UInt8]) throws(Failure) -> [Range<Int>] {
        try split(key, in: body).elements
    }

    /// The element ranges of the array at `key`, and the value of `member` found on the same
    /// pass (a batch's `client_dropped`: one pass over the body, not two).
    static func split(_ key: String, in body: [UInt8], member: String? = nil) throws(Failure) -> Split {
        let result: Result<Split, Failure> = body.withUnsafeBufferPointer { buffer in
            var splitter = JSONBatchSplitter(bytes: buffer)
            do throws(Failure) {
                return .success(try splitter.splitObject(key: Array(key.utf8), member: member.map { Array($0.utf8) }))
            } catch {
                return .failure(error)
            }
        }
        return try result.value()
    }

    private mutating func splitObject(key: [UInt8], member: [UInt8]?) throws(Failure) -> Split {
        skipWhitespace()
        if position + 3 <= bytes.count, bytes[position] == 0xEF, bytes[position + 1] == 0xBB, bytes[position + 2] == 0xBF {
            throw .malformed("a byte order mark is not allowed in JSON (RFC 8259 §8.1)", offset: 0)
        }
        guard position < bytes.count else { throw .malformed("the body is empty", offset: 0) }
        guard bytes[position] == UInt8(ascii: "{") else {
            // Not a batch at all; whether it is JSON decides the error.
            do throws(JSONReader.Failure) {
                try JSONReader.validate(bytes)
            } catch {
                throw .malformed(error.reason, offset: error.offset)
            }
            throw .shape("not an object")
        }
        position += 1
        var found: [Range<Int>]?
        var memberRange: Range<Int>?
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            position += 1
        } else {
            while true {
                skipWhitespace()
                let name = try scanString()
                if let control = bytes[name].firstIndex(where: { $0 < 0x20 }) {
                    throw .malformed("control character in a string", offset: control)
                }
                skipWhitespace()
                try expect(UInt8(ascii: ":"))
                skipWhitespace()
                if bytes[name.lowerBound + 1..<name.upperBound - 1].elementsEqual(key) {
                    guard found == nil else { throw .shape("duplicate key") }
                    guard peek() == UInt8(ascii: "[") else {
                        try skipValue(depth: 1)
                        throw .shape("not an array")
                    }
                    found = try splitArray()
                } else {
                    // Other members are ignored, but must still be JSON.
                    let start = position
                    try skipValue(depth: 1)
                    do throws(JSONReader.Failure) {
                        try JSONReader.validate(UnsafeBufferPointer(rebasing: bytes[start..<position]))
                    } catch {
                        throw .malformed(error.reason, offset: start + error.offset)
                    }
                    if let member, memberRange == nil, bytes[name.lowerBound + 1..<name.upperBound - 1].elementsEqual(member) {
                        memberRange = start..<position
                    }
                }
                skipWhitespace()
                guard let next = peek() else { throw .malformed("unexpected end of the body", offset: position) }
                position += 1
                if next == UInt8(ascii: "}") { break }
                guard next == UInt8(ascii: ",") else { throw .malformed("expected , or } in the object", offset: position - 1) }
            }
        }
        skipWhitespace()
        guard position == bytes.count else { throw .malformed("unexpected data after the JSON object", offset: position) }
        guard let found else { throw .shape("missing key") }
        return Split(elements: found, member: memberRange)
    }

    private mutating func splitArray() throws(Failure) -> [Range<Int>] {
        position += 1  // "["
        var ranges: [Range<Int>] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            position += 1
            return ranges
        }
        while true {
            skipWhitespace()
            let start = position
            try skipValue(depth: 2)
            ranges.append(start..<position)
            skipWhitespace()
            guard let next = peek() else { throw .malformed("unexpected end of the body inside the array", offset: position) }
            position += 1
            if next == UInt8(ascii: "]") { return ranges }
            guard next == UInt8(ascii: ",") else { throw .malformed("expected , or ] in the array", offset: position - 1) }
        }
    }

    /// Skips one value: a string, an object or array (recursively), or a literal/number.
    private mutating func skipValue(depth: Int) throws(Failure) {
        guard let first = peek() else { throw .malformed("expected a value", offset: position) }
        if depth >= Self.maximumDepth, first == UInt8(ascii: "{") || first == UInt8(ascii: "[") { return try skipDeepValue() }
        switch first {
        case UInt8(ascii: "\""):
            _ = try scanString()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let close = first == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            position += 1
            skipWhitespace()
            if peek() == close {
                position += 1
                return
            }
            while true {
                skipWhitespace()
                if first == UInt8(ascii: "{") {
                    _ = try scanString()
                    skipWhitespace()
                    try expect(UInt8(ascii: ":"))
                    skipWhitespace()
                }
                try skipValue(depth: depth + 1)
                skipWhitespace()
                guard let next = peek() else { throw .malformed("unexpected end of the body", offset: position) }
                position += 1
                if next == close { return }
                guard next == UInt8(ascii: ",") else { throw .malformed("expected , or a closing bracket", offset: position - 1) }
            }
        default:
            let start = position
            while let byte = peek(), !Self.endsBareWord(byte) { position += 1 }
            guard position > start else { throw .malformed("unexpected character", offset: position) }
        }
    }

    /// Skips an object or array nested too deep to recurse into, counting brackets without
    /// recursion (the stack stays bounded); the element holding it is refused when it is decoded.
    private mutating func skipDeepValue() throws(Failure) {
        var open = 0
        repeat {
            guard let byte = peek() else { throw .malformed("unexpected end of the body", offset: position) }
            switch byte {
            case UInt8(ascii: "\""):
                _ = try scanString()
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["): open += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): open -= 1
            default: break
            }
            position += 1
        } while open > 0
    }

    /// Scans a string and returns its range including the quotes.
    private mutating func scanString() throws(Failure) -> Range<Int> {
        let start = position
        guard peek() == UInt8(ascii: "\"") else { throw .malformed("expected a string", offset: position) }
        position += 1
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return start..<position
            }
            if byte == UInt8(ascii: "\\") {
                position += 2
                continue
            }
            // A raw control character is invalid JSON, but it cannot end the string: the
            // element's decoding refuses it.
            position += 1
        }
        throw .malformed("unterminated string", offset: start)
    }

    private mutating func expect(_ byte: UInt8) throws(Failure) {
        guard peek() == byte else { throw .malformed("expected \(Character(UnicodeScalar(byte)))", offset: position) }
        position += 1
    }

    private func peek() -> UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
    }

    /// Whether a byte ends a bare word (a number, `true`, or something invalid like `NaN`):
    /// whitespace or a structural character.
    private static func endsBareWord(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x20, 0x0A, 0x0D, 0x09, UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: "]"), UInt8(ascii: "}"),
             UInt8(ascii: "["), UInt8(ascii: "{"), UInt8(ascii: "\""):
            return true
        default:
            return false
        }
    }
}
