/// A query parameter. Everything is sent as text except bytes, which go in binary format so a
/// body is not hex-encoded on the way in.
public enum PostgresValue: Sendable, Equatable {
    case text(String)
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    case bytes([UInt8])
    case null
}

/// What can be passed as a parameter.
public protocol PostgresEncodable {
    var postgresValue: PostgresValue { get }
}

extension String: PostgresEncodable { public var postgresValue: PostgresValue { .text(self) } }
extension Int: PostgresEncodable { public var postgresValue: PostgresValue { .integer(Int64(self)) } }
extension Int64: PostgresEncodable { public var postgresValue: PostgresValue { .integer(self) } }
extension Double: PostgresEncodable { public var postgresValue: PostgresValue { .double(self) } }
extension Bool: PostgresEncodable { public var postgresValue: PostgresValue { .bool(self) } }
extension Array: PostgresEncodable where Element == UInt8 { public var postgresValue: PostgresValue { .bytes(self) } }
extension PostgresValue: PostgresEncodable { public var postgresValue: PostgresValue { self } }
extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    public var postgresValue: PostgresValue { self?.postgresValue ?? .null }
}

/// Array parameters (`$1::text[]`, `$2::bigint[]` …) in PostgreSQL's array literal syntax, for
/// set-based statements over `unnest(...)`.
public enum PostgresArray {
    public static func text(_ values: [String?]) -> PostgresValue {
        literal(values.map { value in value.map(quoted) })
    }

    public static func integer(_ values: [Int64?]) -> PostgresValue {
        literal(values.map { $0.map { String($0) } })
    }

    public static func bool(_ values: [Bool]) -> PostgresValue {
        literal(values.map { $0 ? "t" : "f" })
    }

    /// `bytea[]`, each element in hex format.
    public static func bytes(_ values: [[UInt8]]) -> PostgresValue {
        let digits = Array("0123456789abcdef".utf8)
        return literal(values.map { bytes in
            var element: [UInt8] = Array(#""\\x"#.utf8)
            element.reserveCapacity(bytes.count * 2 + 6)
            for byte in bytes {
                element.append(digits[Int(byte >> 4)])
                element.append(digits[Int(byte & 15)])
            }
            element.append(UInt8(ascii: "\""))
            return String(decoding: element, as: UTF8.self)
        })
    }

    private static func quoted(_ value: String) -> String {
        var quoted = "\""
        for scalar in value.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { quoted += "\\" }
            quoted.unicodeScalars.append(scalar)
        }
        return quoted + "\""
    }

    private static func literal(_ elements: [String?]) -> PostgresValue {
        .text("{" + elements.map { $0 ?? "NULL" }.joined(separator: ",") + "}")
    }
}
