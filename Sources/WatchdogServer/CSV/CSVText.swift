/// CSV as RFC 4180 writes it, for spreadsheets: UTF-8, records ended by CRLF, a field quoted
/// when it holds a comma, a quote, CR or LF (its quotes doubled), and, optionally, a UTF-8
/// byte-order mark first (Excel reads UTF-8 only with one).
///
/// Formula injection (OWASP, "CSV Injection"): a spreadsheet runs a cell that begins with `=`,
/// `+`, `-`, `@`, a tab or CR as a formula. Text cells — anything a client could have sent:
/// release names, screens, views, titles, a report's JSON — that begin with one of them get
/// a `'` in front, which the spreadsheet shows as text. Numbers the server computed are
/// written as numbers and never prefixed: a negative number (`-0.25`, a rate's change) stays
/// a number a spreadsheet can add up. A client's text is never a number cell, whatever it
/// looks like (a release named `-1` is written `'-1`).
enum CSVText {
    /// The byte-order mark some spreadsheets need to read UTF-8 (`bom=true`).
    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
    /// The characters a spreadsheet reads as the start of a formula.
    static let formulaStarts: Set<UInt8> = [UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "@"), 0x09, 0x0D]

    /// One cell.
    enum Cell: Equatable {
        /// Text, neutralised and quoted as needed.
        case text(String)
        /// A number the server computed: written as it is.
        case number(Double)
        case integer(Int64)
        case bool(Bool)
        /// An empty cell (a value that does not exist: no previous release, no rate).
        case empty
    }

    /// The cell's bytes as one field.
    static func field(_ cell: Cell) -> [UInt8] {
        switch cell {
        case .empty: return []
        case .bool(let value): return Array((value ? "true" : "false").utf8)
        case .integer(let value): return Array(String(value).utf8)
        case .number(let value):
            guard value.isFinite else { return [] }
            if value == value.rounded(), abs(value) < 1e15 { return Array(String(Int64(value)).utf8) }
            return Array(String(value).utf8)
        case .text(let text): return quoted(neutralised(Array(text.utf8)))
        }
    }

    /// Text with `'` in front when it begins with a formula character.
    static func neutralised(_ bytes: [UInt8]) -> [UInt8] {
        guard let first = bytes.first, formulaStarts.contains(first) else { return bytes }
        return [UInt8(ascii: "'")] + bytes
    }

    /// The field quoted (quotes doubled) when it holds a comma, quote, CR or LF.
    static func quoted(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0D || $0 == 0x0A }) else { return bytes }
        var out: [UInt8] = [UInt8(ascii: "\"")]
        out.reserveCapacity(bytes.count + 8)
        for byte in bytes {
            out.append(byte)
            if byte == UInt8(ascii: "\"") { out.append(byte) }
        }
        out.append(UInt8(ascii: "\""))
        return out
    }

    /// One record, CRLF ended.
    static func record(_ cells: [Cell]) -> [UInt8] {
        var out: [UInt8] = []
        for (index, cell) in cells.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += field(cell)
        }
        out += [0x0D, 0x0A]
        return out
    }

    /// A header record: column names are the server's own words, written as text.
    static func header(_ names: [String]) -> [UInt8] {
        record(names.map(Cell.text))
    }
}
