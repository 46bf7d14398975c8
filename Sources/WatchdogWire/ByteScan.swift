/// Scans over UTF-8 bytes that the ingest path runs for every report, a word (8 bytes) at a
/// time where it can (issue 26: a report's bytes were walked one at a time, several times).
/// Every function answers exactly what its byte-at-a-time definition would.
public enum ByteScan {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// Whether some byte of `word` is 0 (exact: a borrow only ever marks bytes above a real zero).
    @inline(__always) private static func hasZeroByte(_ word: UInt64) -> Bool { (word &- ones) & ~word & highs != 0 }

    /// Whether some byte of `word` is below `limit` (at most 128; exact as above).
    @inline(__always) private static func hasByte(_ word: UInt64, below limit: UInt8) -> Bool { (word &- ones &* UInt64(limit)) & ~word & highs != 0 }

    /// The first position from `start` on whose 8-byte word may hold a `"` or a backslash (or, with
    /// `controls`, a byte below 0x20): every byte before it is none of those. At most
    /// `bytes.count`, and within 7 bytes of the end the caller goes on byte by byte.
    @inline(__always)
    static func skipPlainString(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, controls: Bool) -> Int {
        guard let base = bytes.baseAddress else { return start }
        var position = start
        while position + 8 <= bytes.count {
            let word = UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self)
            if hasZeroByte(word ^ (ones &* 0x22)) || hasZeroByte(word ^ (ones &* 0x5C)) || (controls && hasByte(word, below: 0x20)) { return position }
            position += 8
        }
        return position
    }

    /// Whether `a` and `b` hold the same bytes (a word at a time; `elementsEqual` walks
    /// iterators and cost more than the rest of a key's lookup).
    @inline(__always)
    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        guard let first = a.baseAddress, let second = b.baseAddress else { return true }
        var position = 0
        while position + 8 <= a.count {
            if UnsafeRawPointer(first + position).loadUnaligned(as: UInt64.self) != UnsafeRawPointer(second + position).loadUnaligned(as: UInt64.self) { return false }
            position += 8
        }
        while position < a.count {
            if first[position] != second[position] { return false }
            position += 1
        }
        return true
    }

    /// Whether every byte is below 0x80.
    public static func isASCII(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable(isASCII) ?? text.utf8.allSatisfy { $0 < 0x80 }
    }

    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var position = 0
        while position + 8 <= bytes.count {
            if UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self) & highs != 0 { return false }
            position += 8
        }
        while position < bytes.count {
            if bytes[position] >= 0x80 { return false }
            position += 1
        }
        return true
    }

    /// The number of Unicode scalars in `text`, and whether one is a C0 control character or
    /// DEL. A String is valid UTF-8, so its scalars are the bytes that do not continue a
    /// sequence (`10xxxxxx`).
    static func scalars(_ text: String) -> (count: Int, control: Bool) {
        text.utf8.withContiguousStorageIfAvailable(scalars) ?? Array(text.utf8).withUnsafeBufferPointer(scalars)
    }

    private static func scalars(_ bytes: UnsafeBufferPointer<UInt8>) -> (count: Int, control: Bool) {
        var count = 0, control = false
        for byte in bytes {
            count &+= byte & 0xC0 == 0x80 ? 0 : 1
            control = control || byte < 0x20 || byte == 0x7F
        }
        return (count, control)
    }
}
