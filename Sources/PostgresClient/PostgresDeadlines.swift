/// How long any call to PostgreSQL may wait, so that a node cut off from its database finds
/// out in seconds instead of in TCP's minutes (issue 45).
///
/// The client side goes into the connection string (libpq parameters): `connect_timeout`,
/// `tcp_user_timeout` (data sent and not acknowledged) and TCP keepalives (a call waiting for
/// an answer on a silent socket). The server side is set on each session once it is open:
/// `statement_timeout`, and `idle_in_transaction_session_timeout`, which makes PostgreSQL end
/// the session — and release its row locks — of a node that went silent inside a transaction.
/// A parameter already in the URL is left as it is — a server setting too, when the URL names
/// it (`options=-c statement_timeout=30s` for a database whose dashboard reads take longer).
public struct PostgresDeadlines: Sendable, Equatable {
    /// libpq's `connect_timeout` in seconds (libpq's minimum is 2).
    public var connectSeconds: Int
    /// `tcp_user_timeout`: sent data left unacknowledged this long breaks the connection.
    public var unacknowledgedMilliseconds: Int
    /// Keepalive probes start after this many idle seconds, one a second, `keepaliveCount` of them.
    public var keepaliveIdleSeconds: Int
    /// Unanswered keepalive probes before the connection counts as broken.
    public var keepaliveCount: Int
    /// `statement_timeout` of every session, in milliseconds (0: none).
    public var statementMilliseconds: Int
    /// `idle_in_transaction_session_timeout` of every session, in milliseconds (0: none).
    public var idleInTransactionMilliseconds: Int

    /// Creates deadlines; the defaults are those `watchdogd` runs with.
    public init(connectSeconds: Int = 2, unacknowledgedMilliseconds: Int = 3_000, keepaliveIdleSeconds: Int = 1, keepaliveCount: Int = 2,
                statementMilliseconds: Int = 4_000, idleInTransactionMilliseconds: Int = 3_000) {
        self.connectSeconds = connectSeconds
        self.unacknowledgedMilliseconds = unacknowledgedMilliseconds
        self.keepaliveIdleSeconds = keepaliveIdleSeconds
        self.keepaliveCount = keepaliveCount
        self.statementMilliseconds = statementMilliseconds
        self.idleInTransactionMilliseconds = idleInTransactionMilliseconds
    }

    /// The deadlines `watchdogd` uses: a lost database is noticed within about 3 s.
    public static let standard = PostgresDeadlines()

    /// The libpq parameters, in the order they are added.
    var clientParameters: [(String, String)] {
        [("connect_timeout", "\(connectSeconds)"), ("tcp_user_timeout", "\(unacknowledgedMilliseconds)"), ("keepalives", "1"),
         ("keepalives_idle", "\(keepaliveIdleSeconds)"), ("keepalives_interval", "1"), ("keepalives_count", "\(keepaliveCount)")]
    }

    /// `url` (a `postgres://` URI or a `key=value` string) with the client parameters it does
    /// not set itself.
    public func applied(to url: String) -> String {
        let isURI = url.hasPrefix("postgres://") || url.hasPrefix("postgresql://")
        var result = url
        for (name, value) in clientParameters where !Self.sets(url, name, isURI: isURI) {
            if isURI {
                result += (result.contains("?") ? "&" : "?") + "\(name)=\(value)"
            } else {
                result += (result.isEmpty ? "" : " ") + "\(name)=\(value)"
            }
        }
        return result
    }

    /// The `SET`s run on every new session. The server's own socket gets the same TCP
    /// deadlines, so a backend that is sending to a node gone silent (not idle in a
    /// transaction, where the idle timeout applies) gives up as soon as the node would.
    func sessionSettings(keepingThoseOf url: String) -> String {
        [("statement_timeout", statementMilliseconds), ("idle_in_transaction_session_timeout", idleInTransactionMilliseconds),
         ("tcp_user_timeout", unacknowledgedMilliseconds), ("tcp_keepalives_idle", keepaliveIdleSeconds), ("tcp_keepalives_interval", 1),
         ("tcp_keepalives_count", keepaliveCount)]
            .filter { !url.contains($0.0) }
            .map { "SET \($0.0) = \($0.1)" }.joined(separator: "; ")
    }

    private static func sets(_ url: String, _ name: String, isURI: Bool) -> Bool {
        if isURI {
            guard let query = url.split(separator: "?", maxSplits: 1).dropFirst().first else { return false }
            return query.split(separator: "&").contains { $0.hasPrefix("\(name)=") }
        }
        return url.split(separator: " ").contains { $0.hasPrefix("\(name)=") }
    }
}
