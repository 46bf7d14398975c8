/// Everything watchdogd keeps: reports, sessions, release roll-ups, credentials and config.
///
/// This is the only interface the server talks to; `SQLiteStore` is the embedded default, and
/// a PostgreSQL store serving several stateless daemons would implement the same protocol.
/// Implementations must be safe to call from several threads at once.
public protocol TelemetryStore: Sendable {
    // MARK: Ingest

    /// Stores the batches of several requests in one transaction (group commit), with their
    /// release roll-ups, and returns per batch how many items were new and how many duplicates.
    /// Returns only after the transaction is durable.
    func ingest(_ batches: [IngestBatch]) throws -> [IngestCounts]

    // MARK: Release health

    /// Apps with their releases, newest release first.
    func apps() throws -> [AppSummary]
    /// Every release of an app with its roll-up, or `nil` when the app does not exist.
    func releases(app: String) throws -> [ReleaseStats]?

    // MARK: Apps and credentials

    /// Creates an app; `false` if it already existed.
    func createApp(_ app: String, createdAtMilliseconds: Int64) throws -> Bool
    func appExists(_ app: String) throws -> Bool
    func addCredential(_ credential: CredentialRecord) throws
    /// The live (not revoked) credential whose secret hashes to `secretHash`.
    func credential(secretHash: [UInt8]) throws -> CredentialRecord?
    /// Revokes an ingest key of an app; `false` if there was no such live key.
    func revokeIngestKey(app: String, keyID: String, atMilliseconds: Int64) throws -> Bool

    // MARK: Remote config

    /// Every app's stored config document.
    func configDocuments() throws -> [ConfigRecord]
    /// Saves a new version of an app's config document and its audit row, if the stored
    /// version is still `expectedVersion` (0: none stored yet).
    /// - Throws: `StoreError.conflict` when another change came first.
    func saveConfig(_ record: ConfigRecord, expectedVersion: Int, before: String?) throws

    // MARK: Operations

    /// Throws unless the store can be written to right now.
    func checkWritable() throws
    /// Flushes and closes; later calls fail.
    func close() throws
}

/// A failure the server must tell apart from others.
public enum StoreError: Error, Equatable, Sendable {
    /// Optimistic concurrency: the stored version is not the one expected.
    case conflict(currentVersion: Int)
    /// The app does not exist.
    case unknownApp(String)
}
