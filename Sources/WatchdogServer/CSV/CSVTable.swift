import WatchdogHTTP

/// A bounded JSON view (releases, issues, a comparison) as one CSV table: one record per
/// element, nested objects flattened into `outer.inner` columns, arrays as their JSON text.
/// The columns are the union of every row's, the view's leading ones first and the rest in
/// name order, so every row has the same columns and a column never moves between rows.
struct CSVTable {
    var rows: [[String: JSONValue]] = []

    /// The rows' cells flattened.
    mutating func append(_ value: JSONValue, extra: [String: JSONValue] = [:]) {
        var row = extra
        Self.flatten(value, prefix: "", into: &row)
        rows.append(row)
    }

    static func flatten(_ value: JSONValue, prefix: String, into row: inout [String: JSONValue]) {
        switch value {
        case .object(let members):
            for (key, member) in members { flatten(member, prefix: prefix.isEmpty ? key : prefix + "." + key, into: &row) }
        default:
            row[prefix.isEmpty ? "value" : prefix] = value
        }
    }

    /// The table's bytes: an optional byte-order mark, the header, one record per row.
    func bytes(leading: [String], bom: Bool) -> [UInt8] {
        let all = Set(rows.flatMap(\.keys))
        let first = leading.filter(all.contains)
        let columns = first + all.subtracting(first).sorted()
        var out = bom ? CSVText.byteOrderMark : []
        out += CSVText.header(columns)
        for row in rows { out += CSVText.record(columns.map { Self.cell(row[$0]) }) }
        return out
    }

    static func cell(_ value: JSONValue?) -> CSVText.Cell {
        switch value {
        case nil, .null?: return .empty
        case .bool(let flag)?: return .bool(flag)
        case .number(let number)?: return .number(number)
        case .string(let text)?: return .text(text)
        case let nested?:
            let bytes = (try? JSONBody.encode(nested)) ?? []
            return .text(String(decoding: bytes, as: UTF8.self))
        }
    }

    /// `bom=true` or `bom=false` (the default), or the error naming the parameter.
    static func wantsBOM(_ request: HTTPRequest) throws(APIError) -> Bool {
        switch request.query["bom"] {
        case nil, "false"?: return false
        case "true"?: return true
        case let other?: throw .badRequest("invalid_parameter", "bom must be true or false, got \"\(other.prefix(20))\"")
        }
    }

    /// A CSV download: `text/csv` with its header row (RFC 4180 §3), as an attachment.
    static func response(_ body: [UInt8], file: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: headers(file: file), body: body)
    }

    static func headers(file: String) -> [(name: String, value: String)] {
        [
            ("Content-Type", "text/csv; charset=utf-8; header=present"),
            ("Content-Disposition", "attachment; filename=\"\(file)\""),
            ("X-Content-Type-Options", "nosniff"),
            ("Cache-Control", "no-store"),
        ]
    }

    /// A file name from an app's name and what the file holds (only letters, digits, `.` and `-`).
    static func file(app: String, _ what: String) -> String {
        app.filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") } + "-" + what + ".csv"
    }
}

extension JSONValue {
    // An object's member: `subscript(_:)` in Notify/HookFormats.swift.

    /// An array's elements (`nil` for a value that is not an array).
    var arrayValue: [JSONValue]? {
        guard case .array(let elements) = self else { return nil }
        return elements
    }
}
