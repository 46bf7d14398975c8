import Foundation
import Gzip
import Testing

/// What the HTTP layer does before a request reaches the router — gzip bodies, body and header
/// limits, keep-alive pipelining — so it needs the real daemon on a socket.
@Suite struct HTTPTransportTests {
    @Test func gzipBodyIsAccepted() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let json = Array(try JSONSerialization.data(withJSONObject: try Fixtures.json("reports/valid-batch.json")))
        let response = try daemon.client.request("POST", "/v1/reports", token: key,
                                                 headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"],
                                                 body: Gzip.compress(json))
        #expect(response.status == 202)
        #expect(response.json["accepted"] as? Int == 50)
    }

    @Test func bodiesOverOneMebibyteAreRefusedWith413AndNothingIsStored() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        // Valid JSON of 1.1 MiB: 450 reports each with a long attribute would be valid item by item.
        var reports: [[String: Any]] = []
        for _ in 0..<450 {
            var report = try Fixtures.freshReport()
            report["logs"] = (0..<3).map { _ in String(repeating: "x", count: 900) }
            reports.append(report)
        }
        let json = Array(try JSONSerialization.data(withJSONObject: ["reports": reports]))
        #expect(json.count > 1 << 20)

        let declared = try daemon.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json"], body: json)
        #expect(declared.status == 413)
        #expect(declared.errorCode == "payload_too_large")

        // Without Content-Length (chunked), the cap is enforced while streaming.
        var chunked: [UInt8] = []
        for start in stride(from: 0, to: json.count, by: 65536) {
            let piece = json[start..<min(start + 65536, json.count)]
            chunked += Array(String(piece.count, radix: 16).utf8) + [13, 10] + piece + [13, 10]
        }
        chunked += Array("0\r\n\r\n".utf8)
        let streamed = try daemon.client.request("POST", "/v1/reports", token: key,
                                                 headers: ["Content-Type": "application/json", "Transfer-Encoding": "chunked"], body: chunked)
        #expect(streamed.status == 413)

        // Small on the wire, over the cap once inflated.
        let compressed = try Gzip.compress(json)
        #expect(compressed.count < 1 << 20)
        let inflated = try daemon.client.request("POST", "/v1/reports", token: key,
                                                 headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"], body: compressed)
        #expect(inflated.status == 413)
        #expect(inflated.errorMessage?.contains("after gzip decompression") == true)

        #expect(try daemon.storedReportCount() == 0)
        #expect(try daemon.client.request("GET", "/healthz").status == 200)
    }

    /// Content-Encoding and header limits belong to the HTTP layer: an unknown encoding gets
    /// 415 and a body that does not inflate 400 `invalid_gzip`, both in the API's error shape;
    /// headers beyond libmicrohttpd's per-connection memory (16 KiB) are refused by it; the
    /// daemon keeps serving.
    @Test func unknownOrGarbageEncodingsAndOversizedHeadersAreRefused() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let encoding = try daemon.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json", "Content-Encoding": "br"], body: Array("{}".utf8))
        #expect(encoding.status == 415)
        #expect(encoding.headers["content-type"]?.hasPrefix("application/json") == true)
        let garbage = try daemon.client.request("POST", "/v1/reports", token: key, headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"], body: [1, 2, 3, 4])
        #expect(garbage.status == 400)
        #expect(garbage.errorCode == "invalid_gzip")
        let huge = try daemon.client.request("GET", "/healthz", headers: ["X-Padding": String(repeating: "p", count: 40_000)])
        #expect(huge.status == 431 || huge.status == 413)
        #expect(try daemon.client.request("GET", "/healthz").status == 200)
        #expect(try daemon.storedReportCount() == 0)
    }

    @Test func oneKeepAliveConnectionCarriesPipelinedPostsAndGets() throws {
        let daemon = try Daemon()
        let key = try daemon.addApp("com.example.mail")
        let connection = try KeepAliveConnection(port: daemon.port)
        var pipeline: [UInt8] = []
        for _ in 0..<3 {
            let body = Array(try JSONSerialization.data(withJSONObject: ["reports": [try Fixtures.freshReport()]]))
            pipeline += KeepAliveConnection.post("/v1/reports", token: key, body: body)
        }
        pipeline += Array("GET /v1/config?app=com.example.mail HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\n\r\n".utf8)
        try connection.write(pipeline)
        var statuses: [Int] = []
        for _ in 0..<4 {
            let response = try #require(try connection.readResponse())
            statuses.append(response.status)
            #expect(response.headers["connection"]?.lowercased() != "close")
        }
        #expect(statuses == [202, 202, 202, 200])
        #expect(try daemon.storedReportCount() == 3)
    }
}
