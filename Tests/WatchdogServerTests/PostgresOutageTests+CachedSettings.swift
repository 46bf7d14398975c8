import Foundation
import Logging
import PostgresClient
import Testing
@testable import WatchdogServer
import WatchdogStore

extension PostgresOutageTests {
    /// An app that requires App Attest keeps requiring it while its settings cannot be read
    /// again: a database blip must not turn into the defaults (`off`), which would let
    /// unattested uploads in once the database answers, until the next read.
    @Test func aRequireAppStaysRequiredWhileItsSettingsCannotBeReadAgain() throws {
        let (base, name, admin) = try Self.tagged()
        let url = try PostgresStore.url(base, schema: "t_cached_\(UUID().uuidString.prefix(8).lowercased())")
        let store = try PostgresStore(url: url, connections: 2)
        #expect(try store.createApp("com.example.cached", createdAtMilliseconds: 0))
        var required = AttestationSettings()
        required.mode = .require
        required.teamID = "ABCDE12345"
        required.bundleID = "com.example.cached"
        let refusals = RefusalCounter(store: store, clock: { 0 }, logger: Logger(label: "test"), background: false)
        let attestation = AttestationService(store: store, clock: { 0 }, roots: [], refusals: refusals, cacheSeconds: 0)
        let admission = AdmissionService(store: store, cacheSeconds: 0)
        try attestation.save(app: "com.example.cached", required)
        #expect(attestation.settings(app: "com.example.cached").mode == .require)
        var strict = AdmissionSettings()
        strict.minimumInstalls = 50
        try admission.save(app: "com.example.cached", strict)
        #expect(admission.settings(app: "com.example.cached").minimumInstalls == 50)

        // PostgreSQL ends the store's sessions: the next read fails, and the pool stays
        // unreachable (later reads fail untried) until a write gets through.
        try admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [name])
        for _ in 0..<200 where try Self.sessions(name, admin) > 0 { usleep(10_000) }
        #expect(throws: (any Error).self) { try store.attestationSettings(app: "com.example.cached") }
        #expect(attestation.settings(app: "com.example.cached").mode == .require, "the last settings read, not the defaults")
        #expect(admission.settings(app: "com.example.cached").minimumInstalls == 50)
    }
}
