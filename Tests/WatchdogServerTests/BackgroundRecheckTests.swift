import Foundation
import Testing
import WatchdogTesting

/// The once-a-second re-check of a token in use does not hold a request on PostgreSQL (issue 45):
/// from half a second it runs in the background and the request is answered from the cache;
/// the revocation it finds is refused from then on, before the second is up.
@Suite(.enabled(if: !TestStore.isSQLite, "the background re-check is for a store across the network"))
struct BackgroundRecheckTests {
    @Test func aTokenInUseIsReCheckedInTheBackgroundAndItsRevocationSeenBeforeTheSecondIsUp() throws {
        let app = try TestApplication()
        defer { try? app.stop() }
        _ = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        #expect(try app.client.request("GET", "/v1/apps", token: viewer).status == 200)
        let id = String(viewer.split(separator: "_")[1])
        #expect(try app.store.revokeCredentials(id: id, name: nil, atMilliseconds: app.clock.now) == 1)
        // Past half the re-check interval: answered from the cache, the re-check sent away.
        app.clock.advance(milliseconds: 600)
        #expect(try app.client.request("GET", "/v1/apps", token: viewer).status == 200)
        // The clock stands still (0.6 s since the check): only the background re-check can
        // have found the revocation.
        var status = 200
        for _ in 0..<500 where status == 200 {
            usleep(10_000)
            status = try app.client.request("GET", "/v1/apps", token: viewer).status
        }
        #expect(status == 401)
    }
}
