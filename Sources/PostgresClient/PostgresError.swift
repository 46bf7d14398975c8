/// A failure reported by libpq or the server, with the server's SQLSTATE when there is one.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// The five-character SQLSTATE (`23505` unique violation, `40P01` deadlock, …); empty when
    /// the failure happened in the client (no connection, broken socket).
    public var sqlState: String
    /// libpq's or the server's message, one line.
    public var message: String

    public init(sqlState: String, message: String) {
        self.sqlState = sqlState
        self.message = message
    }

    /// A deadlock or a serialization failure: the transaction was rolled back and may be retried.
    public var isRetryable: Bool { sqlState == "40P01" || sqlState == "40001" }
    /// The connection is gone (client side, or class 08 / admin shutdown from the server).
    public var isConnectionLoss: Bool { sqlState.isEmpty || sqlState.hasPrefix("08") || sqlState.hasPrefix("57P") }

    /// A call not tried because the pool knows the database is unreachable (SQLSTATE 08006,
    /// connection failure: it counts as a connection loss).
    public static func unreachable(_ message: String) -> PostgresError {
        PostgresError(sqlState: "08006", message: message)
    }

    public var description: String {
        sqlState.isEmpty ? "postgres: \(message)" : "postgres \(sqlState): \(message)"
    }
}
