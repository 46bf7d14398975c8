import Foundation
import PostgresClient
import Testing
import WatchdogTesting

/// A node that loses its database finds out once and stops waiting for it (issue 45): every
/// session carries the deadlines, a lost connection drops the pool's idle ones and turns the
/// pool unreachable — later calls fail at once, untried — and only a write that gets through
/// again makes it reachable. Real PostgreSQL; the loss is PostgreSQL ending the sessions
/// (`pg_terminate_backend`, or its own idle-in-transaction timeout). The cut network itself is
/// `Tests/Partition/run.sh`.
@Suite(.enabled(if: !TestStore.isSQLite, "needs PostgreSQL"))
struct PostgresOutageTests {
    /// The test's PostgreSQL URL with an `application_name` of its own, to find its sessions.
    static func tagged() throws -> (url: String, name: String, admin: PostgresConnection) {
        let base = try #require(ProcessInfo.processInfo.environment["WATCHDOG_TEST_POSTGRES_URL"])
        let name = "outage_\(UUID().uuidString.prefix(8).lowercased())"
        return (base + (base.contains("?") ? "&" : "?") + "application_name=\(name)", name, try PostgresConnection(url: base))
    }

    static func sessions(_ name: String, _ admin: PostgresConnection) throws -> Int {
        try admin.query("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", [name]).first?.int(0) ?? -1
    }

    @Test func aLostConnectionMakesThePoolUnreachableUntilAWriteGetsThrough() throws {
        let (url, name, admin) = try Self.tagged()
        let pool = try PostgresPool(url: url, capacity: 4)
        // Two idle connections, then PostgreSQL ends both.
        _ = try pool.withConnection { first in try pool.withConnection { _ in try first.query("SELECT 1") } }
        #expect(try Self.sessions(name, admin) == 2)
        try admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [name])
        // Terminated backends leave pg_stat_activity as they exit, not with the call.
        for _ in 0..<200 where try Self.sessions(name, admin) > 0 { usleep(10_000) }
        #expect(try Self.sessions(name, admin) == 0)
        #expect(pool.reachability.isReachable)

        // The first call finds its connection gone: the pool is unreachable, the other idle
        // connection dropped with it (not handed to the next caller to find out again).
        let lost = #expect(throws: PostgresError.self) { try pool.withConnection { try $0.query("SELECT 1") } }
        #expect(lost?.isConnectionLoss == true, "\(String(describing: lost))")
        let state = pool.reachability
        #expect(!state.isReachable)
        #expect(state.outages == 1)
        #expect(state.failure != nil)

        // Later calls are not tried: no session is opened for them.
        let refused = #expect(throws: PostgresError.self) { try pool.withConnection { try $0.query("SELECT 1") } }
        #expect(refused?.message.hasPrefix("not tried") == true, "\(String(describing: refused))")
        #expect(try Self.sessions(name, admin) == 0)

        // A read that gets through is not enough; a committed write is.
        _ = try pool.probe(wrote: false) { try $0.query("SELECT 1") }
        #expect(!pool.reachability.isReachable)
        _ = try pool.probe(wrote: true) { connection in try connection.transaction { try connection.execute("SELECT txid_current()") } }
        #expect(pool.reachability.isReachable)
        #expect(try pool.withConnection { try $0.query("SELECT 2").first?.int(0) } == 2)
        #expect(pool.reachability.outages == 1)
    }

    @Test func everySessionCarriesTheDeadlinesAndATransactionLeftIdleIsEndedByTheServer() throws {
        let (url, name, admin) = try Self.tagged()
        let deadlines = PostgresDeadlines(statementMilliseconds: 1_500, idleInTransactionMilliseconds: 300)
        let connection = try PostgresConnection(url: url, deadlines: deadlines)
        #expect(try connection.query("SHOW statement_timeout").first?.text(0) == "1500ms")
        #expect(try connection.query("SHOW idle_in_transaction_session_timeout").first?.text(0) == "300ms")
        // The server's side of the socket (TCP ones; over a Unix socket PostgreSQL shows 0).
        if !url.contains("host=/") { #expect(try connection.query("SHOW tcp_user_timeout").first?.text(0) == "3000") }

        // A node that stops inside a transaction (after writing, holding its row locks) loses
        // its session, and with it the locks, instead of holding them until TCP gives up.
        try connection.execute("BEGIN")
        try connection.execute("SELECT txid_current()")
        var remaining = -1
        for _ in 0..<200 {
            remaining = try Self.sessions(name, admin)
            if remaining == 0 { break }
            usleep(50_000)
        }
        #expect(remaining == 0, "the idle transaction's session is still open")
        #expect(throws: PostgresError.self) { try connection.query("SELECT 1") }
        #expect(connection.isBroken, "a pool drops it")
    }

    @Test func aServerSettingTheURLNamesIsLeftAsTheURLSetsIt() throws {
        let (url, _, _) = try Self.tagged()
        let connection = try PostgresConnection(url: url + "&options=-c%20statement_timeout%3D30s")
        #expect(try connection.query("SHOW statement_timeout").first?.text(0) == "30s")
        #expect(try connection.query("SHOW idle_in_transaction_session_timeout").first?.text(0) == "3s")
    }

    @Test func aStatementSentWithItsCommitStoresItsParametersExactlyAndCommits() throws {
        let (url, _, admin) = try Self.tagged()
        let table = "commit_inline_\(UUID().uuidString.prefix(8).lowercased())"
        try admin.execute("CREATE TABLE \(table) (k text, n bigint)")
        defer { _ = try? admin.execute("DROP TABLE \(table)") }
        let pool = try PostgresPool(url: url, capacity: 1)
        let texts: [String?] = ["it's", #"a "quoted" \ back\slash"#, "$1 $$ dollars", "ünïcødé ✓", nil, "'; DROP TABLE x; --"]
        try pool.transaction { connection in
            try connection.executeAndCommit("INSERT INTO \(table) SELECT * FROM unnest($1::text[], $2::bigint[])",
                                            [PostgresArray.text(texts), PostgresArray.integer(texts.indices.map { Int64($0) })])
        }
        let stored = try admin.query("SELECT k FROM \(table) ORDER BY n").map { $0.optionalText(0) }
        #expect(stored == texts)
        // Committed by its own message: the pool's connection is outside any transaction.
        #expect(try pool.withConnection { try $0.query("SELECT txid_current_if_assigned() IS NULL").first?.bool(0) } == true)
        // A failing statement leaves its transaction to be rolled back, and nothing is stored.
        #expect(throws: PostgresError.self) {
            try pool.transaction { connection in
                try connection.query("INSERT INTO \(table) VALUES ('before', 100)")
                try connection.executeAndCommit("INSERT INTO \(table) VALUES ($1, $2)", [.text("x"), .text("not a number")])
            }
        }
        #expect(try admin.query("SELECT count(*) FROM \(table)").first?.int(0) == texts.count)
    }

    @Test func theClientDeadlinesAreAddedToTheURLWithoutOverridingItsOwn() {
        let deadlines = PostgresDeadlines.standard
        let uri = deadlines.applied(to: "postgres://u@db/watchdog?connect_timeout=9")
        #expect(uri.hasPrefix("postgres://u@db/watchdog?connect_timeout=9&tcp_user_timeout=3000&keepalives=1"))
        #expect(uri.components(separatedBy: "connect_timeout=").count == 2)
        let plain = deadlines.applied(to: "host=db dbname=watchdog")
        #expect(plain.hasPrefix("host=db dbname=watchdog connect_timeout=2 tcp_user_timeout=3000 keepalives=1"))
        #expect(plain.hasSuffix("keepalives_count=2"))
    }
}
