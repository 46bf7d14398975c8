import Foundation
import Testing

@Suite struct RateLimitTests {
    @Test func aFloodFromOneKeyGets429WithRetryAfterAndOtherKeysAreServed() throws {
        let daemon = try Daemon(extraArguments: ["--rate-per-key", "5", "--rate-per-address", "0"])
        let flooder = try daemon.addApp("com.example.mail")
        let neighbour = try daemon.addApp("com.example.notes")
        var statuses: [Int] = []
        var limited: Response?
        for _ in 0..<20 {
            let response = try daemon.client.postJSON("/v1/reports", token: flooder, json: ["reports": [try Fixtures.freshReport()]])
            statuses.append(response.status)
            if response.status == 429 { limited = response }
        }
        #expect(statuses.filter { $0 == 202 }.count >= 10, "the burst (2 × 5) goes through")
        let refused = try #require(limited, "past the burst: 429")
        #expect(refused.errorCode == "rate_limited")
        #expect(Int(refused.headers["retry-after"] ?? "") ?? 0 >= 1)
        #expect(try daemon.client.postJSON("/v1/reports", token: neighbour, json: ["reports": [try Fixtures.freshReport(app: "com.example.notes")]]).status == 202,
                "another key's bucket is its own")
        Thread.sleep(forTimeInterval: 1.1)
        #expect(try daemon.client.postJSON("/v1/reports", token: flooder, json: ["reports": [try Fixtures.freshReport()]]).status == 202, "refilled")
        #expect(try daemon.storedReportCount() == statuses.filter { $0 == 202 }.count + 2, "refused posts stored nothing")
    }

    @Test func oneAddressIsLimitedAcrossKeys() throws {
        let daemon = try Daemon(extraArguments: ["--rate-per-address", "2", "--rate-per-key", "0"])
        let first = try daemon.addApp("com.example.mail")
        let second = try daemon.addApp("com.example.notes")
        var statuses: [Int] = []
        for index in 0..<16 {
            let (key, app) = index % 2 == 0 ? (first, "com.example.mail") : (second, "com.example.notes")
            statuses.append(try daemon.client.postJSON("/v1/reports", token: key, json: ["reports": [try Fixtures.freshReport(app: app)]]).status)
        }
        #expect(statuses.contains(429))
        #expect(statuses.filter { $0 == 202 }.count >= 10 && statuses.filter { $0 == 202 }.count <= 12, "a burst of 5 × 2, then about 2 a second")
    }
}
