/// Writes a view's JSON straight into bytes: the large stats views (`issues`, `releases`,
/// `timeseries`), where Foundation's `JSONEncoder` (a tree of boxed values, sorted per object,
/// then serialized) was a third to a half of the request.
///
/// The output is the bytes `JSONBody.encode` gives for the same view (`JSONEncoder` with sorted
/// keys and unescaped slashes): members are written in the order a view lists them, so a view
/// lists its keys sorted by their UTF-8 bytes, as `JSONEncoder` sorts them (`"a_b"` before
/// `"ab"`); strings escape `"`, `\` and U+0000–U+001F (`\b \t \n \f \r` short, the rest as
/// `\u00XX`) and keep everything else as UTF-8; numbers are Swift's shortest round-trip text
/// without a trailing `.0`. `JSONWriterTests` checks each view against `JSONEncoder`.
///
///     var json = JSONWriter()
///     json.object { json in
///         json.member("app", "com.example.mail")
///         json.member("sessions", 200_000)
///     }
///     // json.bytes: {"app":"com.example.mail","sessions":200000}
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    /// A NaN or an infinity was written (as `null`): JSON has no such numbers, and
    /// `JSONEncoder` refuses them, so the response is an internal error instead.
    private(set) var wroteNonFiniteNumber = false
    /// The object or array being written has a member already: the next one needs a comma.
    private var hasMember = false

    init(capacity: Int = 4096) {
        bytes.reserveCapacity(capacity)
    }

    /// `{…}`, its members written by `members` with `member(_:_:)`, in sorted key order.
    mutating func object(_ members: (inout JSONWriter) -> Void) {
        let outer = hasMember
        bytes.append(UInt8(ascii: "{"))
        hasMember = false
        members(&self)
        bytes.append(UInt8(ascii: "}"))
        hasMember = outer
    }

    /// `"key":value` in the object being written. Keys are the view's own constants: written
    /// as they are, not escaped.
    mutating func member(_ key: StaticString, _ value: some JSONWritable) {
        memberKey(key)
        value.write(to: &self)
    }

    /// `"key":` in the object being written: the value is written next.
    mutating func memberKey(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// `"key":value` with a key that came from data (a kind name): escaped like any string.
    mutating func member(escapedKey key: String, _ value: some JSONWritable) {
        separate()
        string(key)
        bytes.append(UInt8(ascii: ":"))
        value.write(to: &self)
    }

    /// `[…]` of `elements`.
    mutating func array<Elements: Sequence>(_ elements: Elements) where Elements.Element: JSONWritable {
        let outer = hasMember
        bytes.append(UInt8(ascii: "["))
        hasMember = false
        for element in elements {
            separate()
            element.write(to: &self)
        }
        bytes.append(UInt8(ascii: "]"))
        hasMember = outer
    }

    mutating func null() {
        bytes.append(contentsOf: [UInt8(ascii: "n"), UInt8(ascii: "u"), UInt8(ascii: "l"), UInt8(ascii: "l")])
    }

    mutating func bool(_ value: Bool) {
        if value {
            bytes.append(contentsOf: [UInt8(ascii: "t"), UInt8(ascii: "r"), UInt8(ascii: "u"), UInt8(ascii: "e")])
        } else {
            bytes.append(contentsOf: [UInt8(ascii: "f"), UInt8(ascii: "a"), UInt8(ascii: "l"), UInt8(ascii: "s"), UInt8(ascii: "e")])
        }
    }

    mutating func integer(_ value: Int) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        // 20 digits hold any UInt64; written backwards, then copied in order.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = 20
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// Swift's shortest text that reads back as the same double (`0.1`, `1e-05`, `1e+20`),
    /// without a trailing `.0` (`100`, `-0`): what `JSONEncoder` writes.
    mutating func number(_ value: Double) {
        guard value.isFinite else {
            wroteNonFiniteNumber = true
            return null()
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    /// A quoted string: `"` and `\` escaped, U+0000–U+001F as `\b \t \n \f \r` or `\u00XX`,
    /// everything else (U+2028, emoji) as its UTF-8 bytes.
    mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        // Native strings are already contiguous UTF-8: no copy.
        value.withUTF8 { escape($0) }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func escape(_ utf8: UnsafeBufferPointer<UInt8>) {
        var run = 0
        for index in utf8.indices {
            let byte = utf8[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run..<index]))
            run = index + 1
            bytes.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
            case 0x08: bytes.append(UInt8(ascii: "b"))
            case 0x09: bytes.append(UInt8(ascii: "t"))
            case 0x0A: bytes.append(UInt8(ascii: "n"))
            case 0x0C: bytes.append(UInt8(ascii: "f"))
            case 0x0D: bytes.append(UInt8(ascii: "r"))
            default:
                bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), Self.hex[Int(byte >> 4)], Self.hex[Int(byte & 0xF)]])
            }
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run...]))
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func separate() {
        if hasMember { bytes.append(UInt8(ascii: ",")) }
        hasMember = true
    }
}

/// A value that writes its own JSON with a `JSONWriter` (the same bytes as its `Encodable` form).
protocol JSONWritable {
    func write(to json: inout JSONWriter)
}

extension Int: JSONWritable {
    func write(to json: inout JSONWriter) { json.integer(self) }
}

extension Double: JSONWritable {
    func write(to json: inout JSONWriter) { json.number(self) }
}

extension Bool: JSONWritable {
    func write(to json: inout JSONWriter) { json.bool(self) }
}

extension String: JSONWritable {
    func write(to json: inout JSONWriter) { json.string(self) }
}

/// `null` when absent: what `NullWhenAbsent` and array elements encode.
extension Optional: JSONWritable where Wrapped: JSONWritable {
    func write(to json: inout JSONWriter) {
        if let self { self.write(to: &json) } else { json.null() }
    }
}

extension Array: JSONWritable where Element: JSONWritable {
    func write(to json: inout JSONWriter) { json.array(self) }
}

/// Members sorted by the keys' UTF-8 bytes, as `JSONEncoder` sorts them.
extension Dictionary: JSONWritable where Key == String, Value: JSONWritable {
    func write(to json: inout JSONWriter) {
        let sorted = self.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        json.object { json in
            for (key, value) in sorted { json.member(escapedKey: key, value) }
        }
    }
}
