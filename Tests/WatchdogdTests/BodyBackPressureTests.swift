import Foundation
import Testing
import WatchdogTesting
#if canImport(Glibc)
import Glibc
#endif

/// Back-pressure on bodies (issue 26): past the body memory (`--body-memory`, or a client's
/// `--body-memory-per-client`) a request waits, its body unread, instead of getting 503 — until
/// earlier requests complete, up to `--body-wait` seconds, or the server stops. Each client is a
/// loopback address of its own (127.0.0.2, 127.0.0.3, …); budgets of 1–2 MiB so that one
/// unfinished 1 MiB body fills a share.
@Suite(.serialized) struct BodyBackPressureTests {
    /// A connection from `source` that sent the headers of a 1 MiB post and all but 8 bytes of
    /// its body; `finish` sends the rest.
    final class UnfinishedBody {
        let connection: KeepAliveConnection

        init(port: UInt16, from source: String, key: String) throws {
            connection = try KeepAliveConnection(port: port, timeoutSeconds: 30, from: source)
            let body = [UInt8](repeating: UInt8(ascii: " "), count: (1 << 20) - 8)
            try connection.write(Array("POST /v1/reports HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\nContent-Type: application/json\r\nContent-Length: \(1 << 20)\r\n\r\n".utf8) + body)
        }

        /// Sends the last 8 bytes (the body, all spaces, is then refused as JSON: what matters is
        /// that the request completes and gives its memory back).
        func finish() throws -> Response? {
            try connection.write(Array("       x".utf8))
            return try connection.readResponse()
        }
    }

    /// A post of five fresh reports from `source`, sent whole; its answer is read later.
    static func post(port: UInt16, from source: String, key: String) throws -> KeepAliveConnection {
        let connection = try KeepAliveConnection(port: port, timeoutSeconds: 30, from: source)
        let reports = try (0..<5).map { _ in try Fixtures.freshReport() }
        let body = Array(try JSONSerialization.data(withJSONObject: ["reports": reports]))
        try connection.write(KeepAliveConnection.post("/v1/reports", token: key, body: body))
        return connection
    }

    static func code(of response: Response?) -> String? {
        guard let body = response?.body, let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
              let error = object["error"] as? [String: Any] else { return nil }
        return error["code"] as? String
    }

    @Test func aRequestPastTheTotalWaitsAndIsAcceptedOnceAnEarlierOneCompletes() throws {
        let daemon = try Daemon(extraArguments: ["--body-memory", "2", "--body-memory-per-client", "1", "--body-wait", "30"])
        let key = try daemon.addApp("com.example.mail")
        let first = try UnfinishedBody(port: daemon.port, from: "127.0.0.2", key: key)
        let second = try UnfinishedBody(port: daemon.port, from: "127.0.0.3", key: key)
        // Both hold their megabyte: the 2 MiB are taken, by two clients each within its share.
        let waiting = try Self.post(port: daemon.port, from: "127.0.0.4", key: key)
        #expect(!waiting.answers(within: 1.5), "the post waits instead of being refused")

        let finished = try first.finish()
        #expect(finished != nil, "the first body completes and is answered")
        let answer = try waiting.readResponse()
        #expect(answer?.status == 202, "accepted once the first body gave its memory back: \(String(describing: answer?.status)) \(Self.code(of: answer) ?? "")")
        #expect(try second.finish() != nil)
        #expect(try daemon.storedReportCount() == 5)
    }

    @Test func aWaitingRequestIsToldToContinueOnlyOnceItsBodyFits() throws {
        let daemon = try Daemon(extraArguments: ["--body-memory", "1", "--body-memory-per-client", "1", "--body-wait", "30"])
        let key = try daemon.addApp("com.example.mail")
        let held = try UnfinishedBody(port: daemon.port, from: "127.0.0.2", key: key)
        let reports = try (0..<5).map { _ in try Fixtures.freshReport() }
        let body = Array(try JSONSerialization.data(withJSONObject: ["reports": reports]))
        let waiting = try KeepAliveConnection(port: daemon.port, timeoutSeconds: 30, from: "127.0.0.3")
        try waiting.write(Array("POST /v1/reports HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nExpect: 100-continue\r\n\r\n".utf8))
        #expect(!waiting.answers(within: 1.5), "no 100 Continue while the body would not fit")

        #expect(try held.finish() != nil)
        let interim = try waiting.readResponse()
        #expect(interim?.status == 100, "told to send the body once it fits: \(String(describing: interim?.status))")
        try waiting.write(body)
        #expect(try waiting.readResponse()?.status == 202)
    }

    /// A chunked body announces no length, so it reserves the largest body (1 MiB) and gives
    /// back what it did not use once it is complete — while its request still waits for the
    /// group commit, here held up by another connection's SQLite write lock.
    @Test(.enabled(if: TestStore.isSQLite, "holds the writer with a SQLite lock"))
    func aChunkedBodyGivesBackWhatItDidNotUseOnceComplete() throws {
        let daemon = try Daemon(extraArguments: ["--body-memory", "2", "--body-memory-per-client", "2", "--body-wait", "30"])
        let key = try daemon.addApp("com.example.mail")
        let lock = try SQLiteWriteLock(path: daemon.dataDir.appendingPathComponent("watchdog.sqlite3").path)
        defer { lock.release() }
        let reports = try (0..<5).map { _ in try Fixtures.freshReport() }
        let small = Array(try JSONSerialization.data(withJSONObject: ["reports": reports]))
        let chunked = try KeepAliveConnection(port: daemon.port, timeoutSeconds: 30, from: "127.0.0.2")
        try chunked.write(Array("POST /v1/reports HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n\(String(small.count, radix: 16))\r\n".utf8)
                          + small + Array("\r\n0\r\n\r\n".utf8))
        #expect(!chunked.answers(within: 1), "the chunked post waits for the locked writer, its body complete")
        let held = try UnfinishedBody(port: daemon.port, from: "127.0.0.3", key: key)  // 1 of the 2 MiB

        // Had the chunked post kept its 1 MiB, the 2 MiB would be taken and this one would wait.
        let waiting = try KeepAliveConnection(port: daemon.port, timeoutSeconds: 30, from: "127.0.0.4")
        try waiting.write(Array("POST /v1/reports HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\nContent-Type: application/json\r\nContent-Length: \(small.count)\r\nExpect: 100-continue\r\n\r\n".utf8))
        #expect(waiting.answers(within: 5), "the body fits in what the chunked post gave back")
        let interim = try waiting.readResponse()
        #expect(interim?.status == 100, "\(String(describing: interim?.status))")

        lock.release()
        #expect(try chunked.readResponse()?.status == 202)
        try waiting.write(small.map { $0 })  // the same reports again: stored once
        #expect(try waiting.readResponse()?.status == 202)
        #expect(try held.finish() != nil)
        #expect(try daemon.storedReportCount() == 5)
    }

    @Test func aClientAtItsShareDoesNotHoldUpAnotherClient() throws {
        let daemon = try Daemon(extraArguments: ["--body-memory", "4", "--body-memory-per-client", "1", "--body-wait", "60"])
        let key = try daemon.addApp("com.example.mail")
        let held = try UnfinishedBody(port: daemon.port, from: "127.0.0.2", key: key)
        // 127.0.0.2 holds its share; its next post waits, first in line.
        let queued = try Self.post(port: daemon.port, from: "127.0.0.2", key: key)
        #expect(!queued.answers(within: 1.5), "past its share, the client's post waits")

        // Another client passes it. Read with a bound far below --body-wait, so a post stuck
        // behind the first in line is seen as no answer rather than as a late 503.
        let other = try Self.post(port: daemon.port, from: "127.0.0.3", key: key)
        #expect(other.answers(within: 20), "another client's post is not held up by 127.0.0.2's waiting one")
        let answer = try other.readResponse()
        #expect(answer?.status == 202, "\(String(describing: answer?.status)) \(Self.code(of: answer) ?? "")")

        #expect(try held.finish() != nil)
        #expect(try queued.readResponse()?.status == 202, "the waiting post goes on once its client holds less")
        #expect(try daemon.storedReportCount() == 10)
    }

    /// A reservation is declared, not received, so addresses trickling bodies hold their shares
    /// without sending them. With the defaults (2 MiB a client, 32 in all) five such addresses
    /// still leave room for everyone else.
    @Test func fiveAddressesHoldingTheirSharesDoNotStopAnotherClient() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let held = try (2...6).flatMap { host in try (0..<2).map { _ in try UnfinishedBody(port: daemon.port, from: "127.0.0.\(host)", key: key) } }
        let other = try Self.post(port: daemon.port, from: "127.0.0.7", key: key)
        // Read with a bound below --body-wait (10 s): a post held up is seen as no answer.
        #expect(other.answers(within: 8), "another client's post waits behind five addresses' unfinished bodies")
        let answer = try other.readResponse()
        #expect(answer?.status == 202, "\(String(describing: answer?.status)) \(Self.code(of: answer) ?? "")")
        for body in held { body.connection.hangUp() }
    }

    @Test func aRequestWaitingPastTheBoundGets503() throws {
        let daemon = try Daemon(extraArguments: ["--body-memory", "1", "--body-memory-per-client", "1", "--body-wait", "2"])
        let key = try daemon.addApp("com.example.mail")
        let held = try UnfinishedBody(port: daemon.port, from: "127.0.0.2", key: key)
        let started = Date()
        let waiting = try Self.post(port: daemon.port, from: "127.0.0.3", key: key)
        let answer = try waiting.readResponse()
        let waited = Date().timeIntervalSince(started)
        #expect(answer?.status == 503, "\(String(describing: answer?.status))")
        #expect(Self.code(of: answer) == "overloaded")
        #expect(answer?.headers["retry-after"] != nil)
        #expect(answer?.headers["connection"]?.lowercased() == "close", "the unread body is not taken for a request")
        #expect(waited >= 1, "answered after waiting, not at once (\(waited) s)")
        #expect(waiting.closedWithoutAnswer())
        #expect(try held.finish() != nil, "the request holding the memory is not disturbed")
        #expect(try daemon.storedReportCount() == 0)
    }

    @Test func shutdownAnswersWaitingRequestsAndExitsCleanly() throws {
        let daemon = try Daemon(extraArguments: ["--body-memory", "1", "--body-memory-per-client", "1", "--body-wait", "60"])
        let key = try daemon.addApp("com.example.mail")
        let held = try UnfinishedBody(port: daemon.port, from: "127.0.0.2", key: key)
        let waiting = try ["127.0.0.3", "127.0.0.4"].map { try Self.post(port: daemon.port, from: $0, key: key) }
        #expect(!waiting[0].answers(within: 1.5))

        daemon.process.terminate()
        for connection in waiting {
            let answer = try connection.readResponse()
            #expect(answer?.status == 503, "\(String(describing: answer?.status))")
            #expect(Self.code(of: answer) == "shutting_down")
        }
        held.connection.hangUp()  // its client goes away: nothing is left to drain
        let status = daemon.waitForExit(after: "SIGTERM")
        #expect(daemon.process.terminationReason == .exit && status == 0,
                "libmicrohttpd aborts the process if a connection is still suspended at stop: \(daemon.process.terminationReason.rawValue) \(status)")
    }
}
