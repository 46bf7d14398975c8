import CLibPQ
import Glibc

/// One libpq connection. Not thread-safe: one thread uses it at a time (the pool hands it out
/// exclusively). Statements are prepared on first use and reused by their SQL text.
public final class PostgresConnection: @unchecked Sendable {
    private let connection: OpaquePointer
    private var prepared: [String: String] = [:]
    /// Set once a call failed in a way that leaves the connection unusable.
    public private(set) var isBroken = false
    /// Inside `transaction` and not yet committed (`executeAndCommit` commits early).
    private var isInTransaction = false

    /// Connects with a libpq connection string or `postgres://` URI, every wait bounded by
    /// `deadlines` (`PostgresDeadlines`: connect, unacknowledged data, keepalives, statement and
    /// idle-in-transaction timeouts).
    public init(url: String, deadlines: PostgresDeadlines = .standard) throws {
        // libpq is loaded on the first connection (CLibPQ): a missing libpq5 is said here.
        if let unavailable = pq_load() { throw PostgresError(sqlState: "", message: String(cString: unavailable)) }
        guard let connection = pq_connectdb(deadlines.applied(to: url)) else { throw PostgresError(sqlState: "", message: "libpq could not allocate a connection") }
        // Checked before `self.connection` is set: once every property is, a throw runs
        // `deinit`, and a second PQfinish of the same connection is a double free.
        guard pq_status(connection) == CONNECTION_OK else {
            let message = Self.message(pq_errorMessage(connection))
            pq_finish(connection)
            throw PostgresError(sqlState: "", message: message)
        }
        self.connection = connection
        // Notices (e.g. "relation already exists, skipping") are not errors; libpq would print them.
        // standard_conforming_strings (the default) is what `executeAndCommit`'s literals assume.
        _ = try execute(["SET client_min_messages = warning; SET standard_conforming_strings = on", deadlines.sessionSettings(keepingThoseOf: url)]
            .filter { !$0.isEmpty }.joined(separator: "; "))
    }

    deinit { pq_finish(connection) }

    /// Runs one statement (prepared once per connection) with parameters `$1…`.
    @discardableResult
    public func query(_ sql: String, _ parameters: [any PostgresEncodable] = []) throws -> PostgresRows {
        let name: String
        if let known = prepared[sql] {
            name = known
        } else {
            name = "s\(prepared.count)"
            guard let result = pq_prepare(connection, name, sql, Int32(parameters.count), nil) else { throw failure(nil) }
            defer { pq_clear(result) }
            guard pq_resultStatus(result) == PGRES_COMMAND_OK else { throw failure(result) }
            prepared[sql] = name
        }
        return try withParameters(parameters.map(\.postgresValue)) { count, values, lengths, formats in
            try check(pq_execPrepared(connection, name, count, values, lengths, formats, 0))
        }
    }

    /// Runs SQL text as it is (several statements allowed, no parameters): schema changes,
    /// `BEGIN`, `COMMIT`.
    @discardableResult
    public func execute(_ sql: String) throws -> PostgresRows {
        try check(pq_exec(connection, sql))
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    public func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        try execute("BEGIN")
        isInTransaction = true
        defer { isInTransaction = false }
        do {
            let result = try body()
            if isInTransaction { try execute("COMMIT") }
            return result
        } catch {
            if isInTransaction, !isBroken { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Notes that the open transaction was committed by the caller's own message.
    func markCommitted() { isInTransaction = false }

    // MARK: LISTEN / NOTIFY

    /// Starts listening on a channel (an identifier the caller controls, not client input).
    public func listen(_ channel: String) throws {
        try execute("LISTEN \(channel)")
    }

    /// Waits up to `timeout` seconds for notifications and returns their channel and payload
    /// (empty when none came).
    public func notifications(timeout: Double) throws -> [(channel: String, payload: String)] {
        var received = drainNotifications()
        if !received.isEmpty { return received }
        var descriptor = pollfd(fd: pq_socket(connection), events: Int16(POLLIN), revents: 0)
        guard descriptor.fd >= 0 else { throw failure(nil) }
        let ready = poll(&descriptor, 1, Int32(timeout * 1000))
        if ready > 0 {
            guard pq_consumeInput(connection) == 1 else { throw failure(nil) }
            received = drainNotifications()
        }
        return received
    }

    private func drainNotifications() -> [(channel: String, payload: String)] {
        var received: [(String, String)] = []
        while let notification = pq_notifies(connection) {
            received.append((String(cString: notification.pointee.relname), String(cString: notification.pointee.extra)))
            pq_freemem(notification)
        }
        return received
    }

    // MARK: Results and errors

    private func check(_ result: OpaquePointer?) throws -> PostgresRows {
        guard let result else { throw failure(nil) }
        defer { pq_clear(result) }
        switch pq_resultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY: return PostgresRows(result)
        default: throw failure(result)
        }
    }

    private func failure(_ result: OpaquePointer?) -> PostgresError {
        var state = ""
        var message = ""
        if let result {
            if let code = pq_resultErrorField(result, Int32(UInt8(ascii: "C"))) { state = String(cString: code) }
            message = Self.message(pq_resultErrorMessage(result))
        }
        if message.isEmpty { message = Self.message(pq_errorMessage(connection)) }
        if pq_status(connection) != CONNECTION_OK { isBroken = true }
        let error = PostgresError(sqlState: state, message: message.isEmpty ? "unknown failure" : message)
        if error.isConnectionLoss { isBroken = true }
        return error
    }

    private static func message(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "" }
        return String(cString: text).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
    }

    /// Lays the parameters out as libpq wants them, in one buffer: NUL-terminated text, or raw
    /// bytes with a length and the binary format flag.
    private func withParameters<Result>(
        _ parameters: [PostgresValue],
        _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) throws -> Result
    ) throws -> Result {
        var buffer: [CChar] = []
        var offsets: [Int?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        for parameter in parameters {
            let start = buffer.count
            switch parameter {
            case .null:
                offsets.append(nil)
                lengths.append(0)
                formats.append(0)
                continue
            case .text(let text): buffer.append(contentsOf: text.utf8.map { CChar(bitPattern: $0) })
            case .integer(let number): buffer.append(contentsOf: String(number).utf8.map { CChar(bitPattern: $0) })
            case .double(let number): buffer.append(contentsOf: (number.isFinite ? "\(number)" : "NaN").utf8.map { CChar(bitPattern: $0) })
            case .bool(let flag): buffer.append(flag ? CChar(UInt8(ascii: "t")) : CChar(UInt8(ascii: "f")))
            case .bytes(let raw): buffer.append(contentsOf: raw.map { CChar(bitPattern: $0) })
            }
            offsets.append(start)
            lengths.append(Int32(buffer.count - start))
            if case .bytes = parameter { formats.append(1) } else { formats.append(0) }
            buffer.append(0)
        }
        return try buffer.withUnsafeBufferPointer { bytes in
            let values: [UnsafePointer<CChar>?] = offsets.map { offset in offset.map { bytes.baseAddress! + $0 } }
            return try values.withUnsafeBufferPointer { valuePointer in
                try lengths.withUnsafeBufferPointer { lengthPointer in
                    try formats.withUnsafeBufferPointer { formatPointer in
                        try body(Int32(parameters.count), valuePointer.baseAddress, lengthPointer.baseAddress, formatPointer.baseAddress)
                    }
                }
            }
        }
    }
}
