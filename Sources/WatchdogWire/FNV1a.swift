/// FNV-1a, 64 bits: a fast, stable, non-cryptographic hash — for ETags, fingerprints and
/// cohort buckets, which must give the same value on every machine and run.
public struct FNV1a64: Sendable {
    public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    public init() {}

    public mutating func add<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        for byte in bytes { value = (value ^ UInt64(byte)) &* 0x100_0000_01b3 }
    }

    public mutating func add(byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x100_0000_01b3
    }

    public mutating func add(_ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ add($0) }) == nil { add(text.utf8) }
    }

    /// 16 lowercase hex digits.
    public var hex: String { hex(prefix: "") }

    /// `prefix` (ASCII) and 16 lowercase hex digits, written in place.
    public func hex(prefix: StaticString) -> String {
        Self.hex(value, prefix: prefix)
    }

    /// `prefix` (ASCII) and `value` as 16 lowercase hex digits, written in place (a fingerprint
    /// read back from its integer is spelt here too).
    public static func hex(_ value: UInt64, prefix: StaticString) -> String {
        if #available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, *) {
            return String(unsafeUninitializedCapacity: prefix.utf8CodeUnitCount + 16) { write(value, prefix: prefix, into: $0) }
        }
        return hexThroughArray(value, prefix: prefix)
    }

    /// `hex(_:prefix:)` at iOS 13 (WatchdogKit's deployment target), where String's in-place
    /// initializer does not exist yet: the same bytes, copied once more.
    static func hexThroughArray(_ value: UInt64, prefix: StaticString) -> String {
        let bytes = [UInt8](unsafeUninitializedCapacity: prefix.utf8CodeUnitCount + 16) { buffer, count in
            count = write(value, prefix: prefix, into: buffer)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func write(_ value: UInt64, prefix: StaticString, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let digits: StaticString = "0123456789abcdef"
        let prefixCount = prefix.utf8CodeUnitCount
        for index in 0..<prefixCount { buffer[index] = prefix.utf8Start[index] }
        for index in 0..<16 {
            buffer[prefixCount + index] = digits.utf8Start[Int(value >> UInt64(60 - 4 * index) & 0xF)]
        }
        return prefixCount + 16
    }

    public static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var hash = FNV1a64()
        hash.add(bytes)
        return hash.hex
    }
}
