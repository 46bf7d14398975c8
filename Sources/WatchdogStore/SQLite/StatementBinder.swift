import GRDB
import GRDBSQLite

/// Binds values to a prepared statement straight through SQLite's C API and steps it: the
/// writer's per-report statements, where GRDB's `StatementArguments` (an array of boxed
/// values per execution) cost more than SQLite's own work. Every other query uses GRDB.
struct StatementBinder {
    private let handle: SQLiteStatement
    private var position: Int32 = 1
    /// The first failing bind's result code.
    fileprivate var failure: Int32 = SQLITE_OK

    fileprivate init(_ handle: SQLiteStatement) {
        self.handle = handle
    }

    /// `SQLITE_TRANSIENT`: SQLite copies the bytes before the call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    mutating func text(_ value: String?) {
        guard var value else { return null() }
        let code = value.withUTF8 { utf8 -> Int32 in
            guard let base = utf8.baseAddress else { return sqlite3_bind_text(handle, position, "", 0, Self.transient) }
            return sqlite3_bind_text(handle, position, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), Int32(utf8.count), Self.transient)
        }
        advance(code)
    }

    mutating func integer(_ value: Int64) {
        advance(sqlite3_bind_int64(handle, position, value))
    }

    mutating func integer(_ value: Int) {
        integer(Int64(value))
    }

    /// An integer, or NULL for `nil`.
    mutating func integer(_ value: Int64?) {
        guard let value else { return null() }
        integer(value)
    }

    mutating func bool(_ value: Bool) {
        integer(value ? 1 : 0)
    }

    mutating func blob(_ value: [UInt8]) {
        let code = value.withUnsafeBytes { bytes in
            // A zero-length blob needs a non-null pointer, or SQLite binds NULL.
            sqlite3_bind_blob(handle, position, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), Self.transient)
        }
        advance(code)
    }

    /// A `CompactID`: 16 bytes for a canonical UUID, text otherwise.
    mutating func compactID(_ id: String) {
        if let bytes = CompactID.uuidBytes(id) { blob(bytes) } else { text(id) }
    }

    mutating func null() {
        advance(sqlite3_bind_null(handle, position))
    }

    private mutating func advance(_ code: Int32) {
        if code != SQLITE_OK, failure == SQLITE_OK { failure = code }
        position += 1
    }
}

extension Statement {
    /// Binds with `bind`, steps once and resets. Returns the first result column of the first
    /// row as an integer (`RETURNING`), or `nil` when the statement returns no row.
    @discardableResult
    func step(_ db: Database, bind: (inout StatementBinder) -> Void) throws -> Int64? {
        let handle = sqliteStatement
        defer { sqlite3_reset(handle) }
        try bindAll(db, bind)
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return sqlite3_column_int64(handle, 0)
        case SQLITE_DONE: return nil
        case let code: throw Self.error(code, db)
        }
    }

    /// Binds every parameter with `bind`; throws the first failing bind's error.
    private func bindAll(_ db: Database, _ bind: (inout StatementBinder) -> Void) throws {
        var binder = StatementBinder(sqliteStatement)
        bind(&binder)
        if binder.failure != SQLITE_OK { throw Self.error(binder.failure, db) }
    }

    private static func error(_ code: Int32, _ db: Database) -> DatabaseError {
        let message = db.sqliteConnection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "SQLite error \(code)"
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message)
    }
}

/// The current row of a statement stepped through SQLite's C API: the stats reads that
/// return thousands of rows, where GRDB's generic row decoding cost more than the query.
struct StatementColumns {
    fileprivate let handle: SQLiteStatement

    /// The column as text; `""` for NULL.
    func text(_ index: Int32) -> String {
        optionalText(index) ?? ""
    }

    /// The column as text, `nil` for NULL.
    func optionalText(_ index: Int32) -> String? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL, let bytes = sqlite3_column_text(handle, index) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, index))), as: UTF8.self)
    }

    /// The column as an integer; 0 for NULL.
    func integer(_ index: Int32) -> Int64 {
        sqlite3_column_int64(handle, index)
    }
}

extension Statement {
    /// Binds with `bind`, then calls `body` for each row, and resets.
    func forEachRow(_ db: Database, bind: (inout StatementBinder) -> Void, _ body: (StatementColumns) throws -> Void) throws {
        let handle = sqliteStatement
        defer { sqlite3_reset(handle) }
        try bindAll(db, bind)
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_ROW: try body(StatementColumns(handle: handle))
            case SQLITE_DONE: return
            case let code: throw Self.error(code, db)
            }
        }
    }
}
