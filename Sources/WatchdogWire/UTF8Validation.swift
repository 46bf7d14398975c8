extension ByteScan {
    /// Whether `bytes` are well-formed UTF-8 (the Unicode Standard, table 3-7: no overlong
    /// forms, no surrogates, nothing above U+10FFFF) — what `String(validating:as:)` answers.
    ///
    /// Written out because that initializer is Swift 6.0 standard library, which Apple ships
    /// with iOS 18 and macOS 15: WatchdogWire also runs inside WatchdogKit at iOS 13. ASCII,
    /// most of a JSON batch, goes a word (8 bytes) at a time.
    public static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var position = 0
        while position < bytes.count {
            while position + 8 <= bytes.count, UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                position += 8
            }
            guard position < bytes.count else { return true }
            let lead = bytes[position]
            if lead < 0x80 {
                position += 1
                continue
            }
            guard let length = scalarLength(bytes, at: position, lead: lead) else { return false }
            position += length
        }
        return true
    }

    /// `isValidUTF8` over an array's bytes.
    public static func isValidUTF8(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { isValidUTF8($0) }
    }

    /// The length of the well-formed multi-byte sequence that starts with `lead` (≥ 0x80) at
    /// `position`, or `nil`. The second byte's range depends on the lead (table 3-7); the
    /// others are 0x80...0xBF.
    @inline(__always)
    private static func scalarLength(_ bytes: UnsafeBufferPointer<UInt8>, at position: Int, lead: UInt8) -> Int? {
        let length: Int
        let second: ClosedRange<UInt8>
        switch lead {
        case 0xC2...0xDF: length = 2; second = 0x80...0xBF
        case 0xE0: length = 3; second = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3; second = 0x80...0xBF
        case 0xED: length = 3; second = 0x80...0x9F
        case 0xF0: length = 4; second = 0x90...0xBF
        case 0xF1...0xF3: length = 4; second = 0x80...0xBF
        case 0xF4: length = 4; second = 0x80...0x8F
        default: return nil
        }
        guard position + length <= bytes.count, second.contains(bytes[position + 1]) else { return nil }
        for offset in 2..<length where bytes[position + offset] & 0xC0 != 0x80 { return nil }
        return length
    }
}
