extension PostgresConnection {
    /// Runs `sql`, then `COMMIT`, as one message: the last statement of a `transaction`, sent
    /// together with its commit so the server finishes the transaction without waiting for
    /// this node again. For a statement that locks rows other nodes write too: a node cut off
    /// after sending it no longer holds those rows until the idle-transaction timeout — the
    /// server, which has the whole message, commits and releases them (issue 45). Whether it
    /// committed is then unknown to the node, as for any `COMMIT` whose answer was lost.
    ///
    /// The parameters are written into the text as literals (the simple protocol has none):
    /// `$1…` of `sql` must be placeholders only, never inside a string of its own.
    public func executeAndCommit(_ sql: String, _ parameters: [PostgresValue]) throws {
        try execute(Self.inlining(parameters, into: sql) + ";\nCOMMIT")
        // A failure above leaves the transaction open (aborted): `transaction` rolls it back.
        markCommitted()
    }

    /// `sql` with each `$n` replaced by the literal of `parameters[n - 1]`.
    static func inlining(_ parameters: [PostgresValue], into sql: String) -> String {
        var result = ""
        result.reserveCapacity(sql.utf8.count + parameters.count * 32)
        var characters = sql.unicodeScalars.makeIterator()
        var pending = characters.next()
        while let character = pending {
            pending = characters.next()
            guard character == "$", let first = pending, first.properties.numericType == .decimal else {
                result.unicodeScalars.append(character)
                continue
            }
            var digits = ""
            while let digit = pending, ("0"..."9").contains(digit) {
                digits.unicodeScalars.append(digit)
                pending = characters.next()
            }
            let index = Int(digits)! - 1
            result += parameters.indices.contains(index) ? literal(parameters[index]) : "$" + digits
        }
        return result
    }

    /// A value as an SQL literal (standard_conforming_strings on: only `'` is doubled).
    static func literal(_ value: PostgresValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let number): return "\(number)"
        case .double(let number): return number.isFinite ? "'\(number)'::float8" : "'NaN'::float8"
        case .bool(let flag): return flag ? "true" : "false"
        case .text(let text): return "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''") + "'"
        case .bytes(let bytes):
            let digits = Array("0123456789abcdef")
            return "'\\x" + String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }) + "'::bytea"
        }
    }
}
