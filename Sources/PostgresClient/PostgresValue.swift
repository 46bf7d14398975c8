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

/// A text array parameter (`$1::text[]`), in PostgreSQL's array literal syntax.
public func postgresTextArray(_ values: [String?]) -> PostgresValue {
    var literal = "{"
    for (index, value) in values.enumerated() {
        if index > 0 { literal += "," }
        guard let value else {
            literal += "NULL"
            continue
        }
        literal += "\""
        for character in value.unicodeScalars {
            if character == "\"" || character == "\\" { literal += "\\" }
            literal.unicodeScalars.append(character)
        }
        literal += "\""
    }
    return .text(literal + "}")
}
