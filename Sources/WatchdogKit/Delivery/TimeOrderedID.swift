import Foundation
import WatchdogWire

/// Report, session and drop-count ids: UUID version 7 (RFC 9562 §5.7), 48 bits of Unix time in
/// milliseconds then 74 random bits, in the lowercase text form the server expects.
///
/// Time first means ids made one after another sort together: the server's id index takes
/// them near its right edge instead of at a random page, which keeps ingest fast however many
/// reports it holds. 74 random bits per millisecond keep them unique across a fleet.
public enum TimeOrderedID {
    /// A new id for now.
    public static func make() -> String {
        make(milliseconds: UInt64(max(0, Date().timeIntervalSince1970 * 1000)))
    }

    /// A new id for `milliseconds` since 1970 (for tests: the time part is exact).
    public static func make(milliseconds: UInt64) -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (40 - 8 * UInt64(index))) }
        let random = generator.next() as UInt64, more = generator.next() as UInt64
        for index in 6..<16 { bytes[index] = UInt8(truncatingIfNeeded: (index < 14 ? random : more) >> (8 * UInt64(index % 8))) }
        bytes[6] = 0x70 | (bytes[6] & 0x0F)   // version 7
        bytes[8] = 0x80 | (bytes[8] & 0x3F)   // variant 10
        return UUIDText.text(bytes: bytes)
    }
}
