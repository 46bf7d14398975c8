import CLibPQ

/// The rows of one result, copied out of libpq's result (text format) so it can be freed at once.
public struct PostgresRows: Sendable {
    /// Each row's columns; `nil` is SQL NULL.
    public var rows: [[String?]]
    /// Rows the command touched (`INSERT`, `UPDATE`, `DELETE`), from `PQcmdTuples`.
    public var affected: Int

    public var count: Int { rows.count }
    public var isEmpty: Bool { rows.isEmpty }
    public var first: PostgresRow? { rows.first.map(PostgresRow.init) }
    public subscript(index: Int) -> PostgresRow { PostgresRow(columns: rows[index]) }

    init(_ result: OpaquePointer) {
        let rowCount = Int(pq_ntuples(result))
        let columnCount = Int(pq_nfields(result))
        var rows: [[String?]] = []
        rows.reserveCapacity(rowCount)
        for row in 0..<rowCount {
            var columns: [String?] = []
            columns.reserveCapacity(columnCount)
            for column in 0..<columnCount {
                if pq_getisnull(result, Int32(row), Int32(column)) == 1 {
                    columns.append(nil)
                } else {
                    columns.append(String(cString: pq_getvalue(result, Int32(row), Int32(column))))
                }
            }
            rows.append(columns)
        }
        self.rows = rows
        affected = Int(String(cString: pq_cmdTuples(result))) ?? 0
    }
}

extension PostgresRows: Sequence {
    public func makeIterator() -> some IteratorProtocol<PostgresRow> {
        rows.lazy.map(PostgresRow.init).makeIterator()
    }
}

/// One row in text format, read by column position.
public struct PostgresRow: Sendable {
    public var columns: [String?]

    public func text(_ index: Int) -> String { columns[index] ?? "" }
    public func optionalText(_ index: Int) -> String? { columns[index] }
    public func integer(_ index: Int) -> Int64 { columns[index].flatMap { Int64($0) } ?? 0 }
    public func int(_ index: Int) -> Int { Int(integer(index)) }
    public func optionalInteger(_ index: Int) -> Int64? { columns[index].flatMap { Int64($0) } }
    public func double(_ index: Int) -> Double { columns[index].flatMap { Double($0) } ?? 0 }
    public func optionalDouble(_ index: Int) -> Double? { columns[index].flatMap { Double($0) } }
    public func bool(_ index: Int) -> Bool { columns[index] == "t" || columns[index] == "true" || columns[index] == "1" }

    /// A `bytea` column (text format: `\x` and hex digits).
    public func bytes(_ index: Int) -> [UInt8] {
        guard let text = columns[index] else { return [] }
        var utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x") else { return utf8 }
        utf8.removeFirst(2)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var index = 0
        while index + 1 < utf8.count {
            bytes.append(Self.nibble(utf8[index]) << 4 | Self.nibble(utf8[index + 1]))
            index += 2
        }
        return bytes
    }

    private static func nibble(_ character: UInt8) -> UInt8 {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return character - UInt8(ascii: "A") + 10
        default: return 0
        }
    }
}
