import Foundation
import GRDB
import WatchdogWire

/// Identifiers as the store keys them: a canonical UUID (what WatchdogKit sends) as its 16
/// bytes, anything else as its text. In SQLite a BLOB never equals a TEXT, so a text id whose
/// bytes happen to spell some UUID's 16 bytes is still a different id.
enum CompactID {
    /// The key for `id`, which the caller has already lowercased where ids are case-insensitive.
    static func databaseValue(_ id: String) -> DatabaseValue {
        guard let bytes = uuidBytes(id) else { return id.databaseValue }
        return bytes.withUnsafeBufferPointer { Data(buffer: $0) }.databaseValue
    }

    /// The id back as text: 16 bytes as a lowercase canonical UUID, text as it is.
    static func text(from value: DatabaseValue) -> String {
        switch value.storage {
        case .string(let text): return text
        case .blob(let data) where data.count == 16: return UUIDText.text(bytes: Array(data))
        case .blob(let data): return String(decoding: data, as: UTF8.self)
        case .int64(let number): return String(number)
        default: return ""
        }
    }

    /// The 16 bytes of `8-4-4-4-12` lowercase hex; `nil` for anything else (upper case
    /// included, so the text read back is always the text that was keyed).
    static func uuidBytes(_ text: String) -> [UInt8]? {
        text.utf8.withContiguousStorageIfAvailable(uuidBytes) ?? Array(text.utf8).withUnsafeBufferPointer(uuidBytes)
    }

    private static func uuidBytes(_ utf8: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard utf8.count == 36, utf8[8] == UInt8(ascii: "-"), utf8[13] == UInt8(ascii: "-"), utf8[18] == UInt8(ascii: "-"),
              utf8[23] == UInt8(ascii: "-") else { return nil }
        var bytes = [UInt8](repeating: 0, count: 16)
        var index = 0
        for pair in 0..<16 {
            // The hex digits' positions: the dashes sit after the 4th, 6th, 8th and 10th byte.
            if index == 8 || index == 13 || index == 18 || index == 23 { index += 1 }
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            bytes[pair] = high << 4 | low
            index += 2
        }
        return bytes
    }

    /// A lowercase hex digit's value.
    @inline(__always) private static func nibble(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}

/// A fingerprint (`fp_` + 16 lowercase hex digits, as `Fingerprint.of` makes them) as the 64-bit
/// integer it spells, for reports and the ingest-side session marks; anything else stays text,
/// so the text read back is always the text that was keyed.
enum CompactFingerprint {
    static func databaseValue(_ fingerprint: String) -> DatabaseValue {
        integer(fingerprint)?.databaseValue ?? fingerprint.databaseValue
    }

    /// The integer a well-formed fingerprint spells, else `nil` (upper-case digits included).
    static func integer(_ fingerprint: String) -> Int64? {
        guard fingerprint.utf8.count == 19 else { return nil }
        var value: UInt64 = 0
        var count = 0
        for byte in fingerprint.utf8 {
            count += 1
            if count <= 3 {
                guard byte == prefix[count - 1] else { return nil }
                continue
            }
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = value << 4 | UInt64(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = value << 4 | UInt64(byte - UInt8(ascii: "a") + 10)
            default: return nil
            }
        }
        return Int64(bitPattern: value)
    }

    private static let prefix: [UInt8] = Array("fp_".utf8)

    /// The fingerprint back as text from what `databaseValue` stored.
    static func text(from value: DatabaseValue) -> String {
        switch value.storage {
        case .int64(let number): FNV1a64.hex(UInt64(bitPattern: number), prefix: "fp_")
        case .string(let text): text
        default: ""
        }
    }
}
