import Foundation
import JWTKit
import Locking
import Logging
import Testing
import WatchdogHTTP
@testable import WatchdogServer

/// Key rotation, bounded: a token naming a key the cached JWKS does not list makes the provider's
/// JWKS fetched again — at most once per `jwksRefetchMilliseconds`, whatever kids tokens name.
/// The provider's discovery document and JWKS are served over real HTTP on loopback (the
/// project's own HTTP layer); the clock is moved by hand.
@Suite struct JWKSRefetchTests {
    /// A provider's two documents on loopback; counts the JWKS fetches.
    final class Publisher: Sendable {
        let state = Locked<(jwks: [UInt8], fetches: Int)>(([], 0))
        let server: HTTPServer
        var issuer: String { "http://127.0.0.1:\(server.port)" }

        init() throws {
            let state = self.state
            let configuration = HTTPServerConfiguration(address: ListenAddress("127.0.0.1:0")!) { _ in HTTPResponse(status: 500) }
            let port = Locked<UInt16>(0)
            server = try HTTPServer(configuration: configuration, logger: Logger(label: "oidc-publisher")) { request, responder in
                let base = "http://127.0.0.1:\(port.withLock { $0 })"
                let body: [UInt8]
                if request.path == "/.well-known/openid-configuration" {
                    body = Array(#"{"issuer":"\#(base)","authorization_endpoint":"\#(base)/authorize","token_endpoint":"\#(base)/token","jwks_uri":"\#(base)/jwks"}"#.utf8)
                } else {
                    body = state.withLock { state in
                        state.fetches += 1
                        return state.jwks
                    }
                }
                responder.respond(HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: body))
            }
            port.withLock { $0 = server.port }
        }

        func publish(_ keys: IDTokenVerifierTests.Keys) {
            state.withLock { $0.jwks = keys.jwks }
        }

        var fetches: Int { state.withLock { $0.fetches } }

        deinit { server.shutdown(drainSeconds: 1) }
    }

    @Test func anUnknownKidFetchesTheJWKSAgainAtMostOncePerInterval() async throws {
        let publisher = try Publisher()
        let clock = Locked<Int64>(1_900_000_000_000)
        let configuration = OIDCConfiguration(issuer: publisher.issuer, clientID: IDTokenVerifierTests.client, clientSecret: nil, rules: [],
                                              groupsClaim: "groups", providerName: "test", redirectURI: nil, scopes: [], jwksRefetchMilliseconds: 60_000)
        let provider = OIDCProvider(configuration: configuration) { clock.withLock { $0 } }
        func token(_ keys: IDTokenVerifierTests.Keys) async throws -> String {
            let now = Double(clock.withLock { $0 }) / 1_000
            return try await keys.sign(IDTokenVerifierTests.claims(["iss": .string(publisher.issuer), "iat": .number(now), "exp": .number(now + 300)]))
        }
        func verdict(_ token: String) async -> OIDCFailure? {
            do {
                _ = try await provider.verify(idToken: token, nonce: IDTokenVerifierTests.nonce)
                return nil
            } catch {
                return error
            }
        }
        let old = await IDTokenVerifierTests.Keys(kid: "old")
        publisher.publish(old)
        #expect(await verdict(try await token(old)) == nil)
        #expect(publisher.fetches == 1)

        // The provider rotates; a token under the new key a second later: the JWKS was fetched
        // a second ago, so not again, and the token is refused.
        let new = await IDTokenVerifierTests.Keys(kid: "new")
        publisher.publish(new)
        clock.withLock { $0 += 1_000 }
        #expect(await verdict(try await token(new)) == .token(.unknownKey("new")))
        for kid in (0..<20).map({ "made-up-\($0)" }) {
            #expect(await verdict(try await token(IDTokenVerifierTests.Keys(kid: kid))) == .token(.unknownKey(kid)))
        }
        #expect(publisher.fetches == 1)

        // A minute after the last fetch: fetched again, once, and the new key verifies.
        clock.withLock { $0 += 59_000 }
        #expect(await verdict(try await token(new)) == nil)
        #expect(await verdict(try await token(new)) == nil)
        #expect(publisher.fetches == 2)
        // The old key is gone from the provider's JWKS, and so from watchdogd's.
        #expect(await verdict(try await token(old)) == .token(.unknownKey("old")))
    }
}
