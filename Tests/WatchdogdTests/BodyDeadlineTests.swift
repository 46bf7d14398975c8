import Foundation
import Testing
import WatchdogTesting
#if canImport(Glibc)
import Glibc
#endif

/// The body deadline: once a request's body memory is granted, the whole body must arrive
/// within `--body-deadline` seconds plus its size at `--body-min-rate` KiB/s, or its connection
/// is closed and the memory given back. libmicrohttpd's own timeout restarts with every byte,
/// so without it a client trickling a byte every few seconds held its reservation for ever.
/// `--body-min-rate 1024` makes a 1 MiB body's deadline `--body-deadline` + 1 s, so the tests
/// take seconds; each client is a loopback address of its own.
@Suite(.serialized) struct BodyDeadlineTests {
    /// A 1 MiB post's headers with `Expect: 100-continue`: the `100 Continue` says its memory
    /// was granted (and so its deadline armed) before a byte of the body is sent.
    static func grantedUnsentBody(port: UInt16, from source: String, key: String) throws -> KeepAliveConnection {
        let connection = try KeepAliveConnection(port: port, timeoutSeconds: 30, from: source)
        try connection.write(unsentBodyHead(key: key))
        let interim = try connection.readResponse()
        try #require(interim?.status == 100, "the body's memory is granted at once: \(String(describing: interim?.status))")
        return connection
    }

    static func unsentBodyHead(key: String) -> [UInt8] {
        Array("POST /v1/reports HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\nContent-Type: application/json\r\nContent-Length: \(1 << 20)\r\nExpect: 100-continue\r\n\r\n".utf8)
    }

    static func reportsBody() throws -> [UInt8] {
        let reports = try (0..<5).map { _ in try Fixtures.freshReport() }
        return Array(try JSONSerialization.data(withJSONObject: ["reports": reports]))
    }

    /// The trickling body's memory is granted at once, or only after it waited for an earlier
    /// body's (the deadline is then armed when its connection is resumed).
    @Test(arguments: [false, true])
    func aBodyTrickledPastItsDeadlineIsCutOffAndItsMemoryGoesToTheClientWaiting(grantedAfterWaiting: Bool) throws {
        // 1 MiB in all, held by the trickling body; its deadline: 1 s + 1 MiB at 1 MiB/s.
        let daemon = try Daemon(extraArguments: ["--body-memory", "1", "--body-memory-per-client", "1", "--body-wait", "60",
                                                 "--body-deadline", "1", "--body-min-rate", "1024"])
        let key = try daemon.addApp("com.example.mail")
        let trickling: KeepAliveConnection
        if grantedAfterWaiting {
            let earlier = try Self.grantedUnsentBody(port: daemon.port, from: "127.0.0.4", key: key)
            trickling = try KeepAliveConnection(port: daemon.port, timeoutSeconds: 30, from: "127.0.0.2")
            try trickling.write(Self.unsentBodyHead(key: key))
            #expect(!trickling.answers(within: 0.5), "no 100 Continue while the earlier body holds the memory")
            try earlier.write([UInt8](repeating: UInt8(ascii: " "), count: 1 << 20))  // not JSON: refused, its memory given back
            #expect(try earlier.readResponse() != nil, "the earlier body is answered")
            let interim = try trickling.readResponse()
            try #require(interim?.status == 100, "granted once the earlier body completed: \(String(describing: interim?.status))")
        } else {
            trickling = try Self.grantedUnsentBody(port: daemon.port, from: "127.0.0.2", key: key)
        }
        let waiting = try BodyBackPressureTests.post(port: daemon.port, from: "127.0.0.3", key: key)

        // A byte every half second: libmicrohttpd's 30 s idle timeout never fires.
        let started = Date()
        while !trickling.answers(within: 0.5), Date().timeIntervalSince(started) < 20 {
            try trickling.write(Array(" ".utf8))
        }
        let cutAfter = Date().timeIntervalSince(started)
        print("body deadline (2 s): a body trickled at 2 bytes/s was cut off after \(String(format: "%.1f", cutAfter)) s")
        // Not libmicrohttpd's idle timeout: it restarts with every byte.
        try #require(trickling.answers(within: 0), "the trickling connection is still open after 20 s")
        #expect(trickling.closedWithoutAnswer(), "the trickling connection is closed, unanswered")

        // Its megabyte was given back: the waiting post gets it (read with a bound far below
        // --body-wait, so memory never given back shows as no answer rather than a late 503).
        try #require(waiting.answers(within: 15), "the waiting post is still waiting: the trickling body's memory was not given back")
        let answer = try waiting.readResponse()
        #expect(answer?.status == 202, "\(String(describing: answer?.status)) \(BodyBackPressureTests.code(of: answer) ?? "")")
        #expect(try daemon.storedReportCount() == 5)
        let metrics = try daemon.client.request("GET", "/metrics").text
        #expect(metrics.contains("watchdog_body_deadline_missed_total 1"), "the drop is counted")
    }

    /// Within the deadline, pauses do not matter; and the deadline ends with the body: the
    /// kept-alive connection then idles past it and is still used for the next post.
    @Test func anHonestBodySentInPiecesWithPausesIsAcceptedAndItsConnectionKept() throws {
        // A few KiB: the deadline is 3 s (and the size's few milliseconds).
        let daemon = try Daemon(extraArguments: ["--body-deadline", "3", "--body-min-rate", "1024"])
        let key = try daemon.addApp("com.example.mail")
        let body = try Self.reportsBody()
        let connection = try KeepAliveConnection(port: daemon.port, timeoutSeconds: 30, from: "127.0.0.2")
        let request = KeepAliveConnection.post("/v1/reports", token: key, body: body)
        // The headers and a third of the body, then the rest in two pieces, 0.3 s apart.
        let cuts = [0, request.count - body.count * 2 / 3, request.count - body.count / 3, request.count]
        for index in 0..<3 {
            if index > 0 { #expect(!connection.answers(within: 0.3), "nothing is answered while the body is incomplete") }
            try connection.write(Array(request[cuts[index]..<cuts[index + 1]]))
        }
        let answer = try connection.readResponse()
        #expect(answer?.status == 202, "\(String(describing: answer?.status)) \(BodyBackPressureTests.code(of: answer) ?? "")")

        #expect(!connection.answers(within: 4), "the connection, idle past the body's deadline, is left open")
        try connection.write(KeepAliveConnection.post("/v1/reports", token: key, body: try Self.reportsBody()))
        #expect(try connection.readResponse()?.status == 202, "the next post on the kept-alive connection is answered")
        #expect(try daemon.storedReportCount() == 10)
    }

    /// The deadline covers receiving the body, not the wait for the group commit.
    @Test(.enabled(if: TestStore.isSQLite, "holds the writer with a SQLite lock"))
    func aCompleteBodyWaitingForTheWriterPastItsDeadlineIsStillAnswered() throws {
        let daemon = try Daemon(extraArguments: ["--body-deadline", "1", "--body-min-rate", "1024"])
        let key = try daemon.addApp("com.example.mail")
        let lock = try SQLiteWriteLock(path: daemon.dataDir.appendingPathComponent("watchdog.sqlite3").path)
        defer { lock.release() }
        let connection = try BodyBackPressureTests.post(port: daemon.port, from: "127.0.0.2", key: key)
        #expect(!connection.answers(within: 3), "neither answered nor closed while the writer is held, past the body's 1 s deadline")
        lock.release()
        let answer = try connection.readResponse()
        #expect(answer?.status == 202, "\(String(describing: answer?.status)) \(BodyBackPressureTests.code(of: answer) ?? "")")
        #expect(try daemon.storedReportCount() == 5)
    }
}
