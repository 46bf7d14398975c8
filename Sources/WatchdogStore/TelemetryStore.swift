/// Everything watchdogd keeps: reports, sessions, release roll-ups, credentials and config.
///
/// This is the only interface the server talks to; `SQLiteStore` is the embedded default, and
/// a PostgreSQL store serving several stateless daemons would implement the same protocol.
/// Implementations must be safe to call from several threads at once.
public protocol TelemetryStore: Sendable {
    // MARK: Ingest

    /// Stores the batches of several requests in one transaction (group commit), with their
    /// release roll-ups, and returns per batch how many items were new and how many duplicates
    /// — or that its assertion's counter did not move on, and none of its items were stored
    /// (the counters are compared and set in the same transaction, in request order, before
    /// any item). Returns only after the transaction is durable.
    func ingest(_ batches: [IngestBatch]) throws -> [IngestOutcome]

    // MARK: Release health

    /// Apps with their listed releases.
    func apps() throws -> [AppSummary]
    /// Every listed release of an app (declared or admitted, `release_admissions`) with its
    /// roll-up, or `nil` when the app does not exist. Unlisted releases: `unlistedReleases`.
    func releases(app: String) throws -> [ReleaseStats]?
    /// One release with its breakdowns, or `nil` when it has no data.
    func releaseDetail(app: String, release: ReleaseID) throws -> ReleaseDetail?
    /// The issues (fingerprints) of one release.
    func issues(app: String, release: ReleaseID) throws -> [IssueRow]
    /// The rows of one release for the given fingerprints (those it has none for are left out).
    func issues(app: String, release: ReleaseID, fingerprints: [String]) throws -> [IssueRow]
    /// For each fingerprint, the earliest of `releases` (oldest first) in which it has headline
    /// reports; fingerprints with none in any of them are left out. Releases not in the list
    /// are not looked at.
    func firstReleases(app: String, fingerprints: [String], among releases: [ReleaseID]) throws -> [String: ReleaseID]
    /// Hourly counts, per kind, between two hours (inclusive); all releases when `release` is nil.
    func hourly(app: String, release: ReleaseID?, kind: String?, fromHour: Int64, toHour: Int64) throws -> [HourlyRow]
    /// The keyboard-height histogram; all releases when `release` is nil.
    func keyboardHeights(app: String, release: ReleaseID?) throws -> [HeightRow]
    /// How concentrated a release's reports are among its installs (`releases` and
    /// `releaseDetail` leave `concentration` empty: it takes a sort of the release's installs).
    func concentration(app: String, release: ReleaseID) throws -> InstallConcentration
    /// Every install of a release with its network, sessions and active reports (config
    /// cohorts; each side's networks for `NetworkWeighting`).
    func installs(app: String, release: ReleaseID) throws -> [InstallRow]
    /// Session starts per hour between two hours (inclusive); all releases when `release` is nil.
    func hourlySessions(app: String, release: ReleaseID?, fromHour: Int64, toHour: Int64) throws -> [HourlySessionsRow]
    /// Per listed release, the counted session starts dated from `fromHour` on and those
    /// attested, the most sessions first, at most `limit` releases. Unlisted releases (anyone with
    /// the ingest key can start them) are not read, so they cannot push listed ones out.
    func sessionsByRelease(app: String, fromHour: Int64, limit: Int) throws -> [ReleaseSessionsRow]
    /// The hour a release's bulk of sessions started, as kept by `keepBulkStart`; nil before.
    func keptBulkStart(app: String, release: ReleaseID) throws -> Int64?
    /// Keeps `hour` as the release's bulk start unless one is kept already (the first wins, on
    /// every node); returns the kept one.
    func keepBulkStart(app: String, release: ReleaseID, hour: Int64) throws -> Int64?
    /// The app's custom (`x-`) kinds, the most reported first, at most `limit` (the
    /// cardinality registry's start).
    func customKinds(app: String, limit: Int) throws -> [String]
    /// A release's distinct screens, views, device models, input modes and channels, the most reported
    /// first, at most `limit` of each (the cardinality registry's start).
    func releaseValues(app: String, release: ReleaseID, limit: Int) throws -> ReleaseValues
    /// Reports newest first (by `sequence`), those with a sequence below `before` when given.
    func reports(app: String, filter: ReportFilter, before: Int64?, limit: Int) throws -> [StoredReport]
    /// The reports with this id: ids are unique per app, so at most one when `app` is given,
    /// and one per app that used the id otherwise (ordered by app).
    func reports(id: String, app: String?) throws -> [StoredReport]

    // MARK: Release admission

    /// The app's listed releases (declared or admitted), oldest listing first.
    func releaseAdmissions(app: String) throws -> [ReleaseAdmission]
    /// Lists a release (a declaration replaces an admission, not the other way round); `false`
    /// when it was already listed in that state or better. - Throws: `StoreError.unknownApp`.
    func admitRelease(_ admission: ReleaseAdmission) throws -> Bool
    /// Takes a release off the list (its data stays); `false` when it was not listed.
    func unlistRelease(app: String, release: ReleaseID) throws -> Bool
    /// Distinct installs and networks with counted session starts, for each of `releases`
    /// that has any stored data and is not listed.
    func admissionEvidence(app: String, releases: [ReleaseID]) throws -> [ReleaseID: AdmissionEvidence]
    /// The app's releases that have data but are not listed: their count and totals, and one
    /// page (most session starts first), after `offset` of them.
    func unlistedReleases(app: String, offset: Int, limit: Int) throws -> UnlistedReleases
    /// Deletes a release, listed or not, with every row of it (raw rows, roll-ups, marks,
    /// its listing); how many rows went. 0 when it had none.
    func deleteRelease(app: String, release: ReleaseID) throws -> Int
    /// The app's admission settings as stored (JSON), `nil` for the defaults.
    func admissionSettings(app: String) throws -> String?
    /// Saves the app's admission settings. - Throws: `StoreError.unknownApp`.
    func saveAdmissionSettings(app: String, json: String) throws
    /// How concentrated a release's counted session starts are (installs, networks, hours).
    func sessionConcentration(app: String, release: ReleaseID) throws -> SessionConcentration
    /// Each listed release's reach: distinct networks with counted session starts (releases
    /// without any are left out), in one query.
    func listedReleaseNetworks(app: String) throws -> [ReleaseID: Int]

    // Attested installs (docs/security.md, "Attested installs").

    /// Stores the SHA-256 of a new attestation challenge unless `address` already has
    /// `maximumPerAddress`, or its `network` `maximumPerNetwork`, unexpired ones for the app
    /// (then `false`); drops the app's expired ones.
    func issueAttestChallenge(app: String, hash: [UInt8], network: String, address: String, expiresAt: Int64, now: Int64,
                              maximumPerNetwork: Int, maximumPerAddress: Int) throws -> Bool
    /// Uses a challenge once: it is deleted whatever the answer.
    func consumeAttestChallenge(app: String, hash: [UInt8], now: Int64) throws -> ChallengeUse
    /// Stores a verified key unless the app has this key id already; it owns its install unless
    /// another key attested it first (an install id belongs to the first key that attests it).
    func saveAttestedKey(_ key: AttestedKey) throws -> AttestedKeySave
    func attestedKey(app: String, keyID: [UInt8]) throws -> AttestedKey?
    /// The install ids with an attested key.
    func attestedInstalls(app: String) throws -> Set<String>
    /// For each of `releases`, its counted session starts that carried their install's owning
    /// key's assertion (releases without any are left out). Read per release, so the cost
    /// follows the releases asked for, not every release a key holder invented.
    func attestedSessions(app: String, releases: [ReleaseID]) throws -> [ReleaseID: Int]
    /// The app's `AttestationSettings` JSON, `nil` when never saved.
    func attestationSettings(app: String) throws -> String?
    func saveAttestationSettings(app: String, json: String) throws

    /// Adds `counts` to the stored refusal counts (`RefusalCount`; a row of an app that does not
    /// exist is skipped) and deletes those of hours before `keepFrom`.
    func addRefusals(_ counts: [RefusalCount], keepFrom: Int64) throws

    /// The app's refusal counts of the hours from `since`, oldest first.
    func refusals(app: String, since: Int64) throws -> [RefusalCount]

    // MARK: Apps and credentials

    /// Creates an app; `false` if it already existed.
    func createApp(_ app: String, createdAtMilliseconds: Int64) throws -> Bool
    func appExists(_ app: String) throws -> Bool
    func addCredential(_ credential: CredentialRecord) throws
    /// The live (not revoked) credential whose secret hashes to `secretHash`.
    func credential(secretHash: [UInt8]) throws -> CredentialRecord?
    /// A live (not revoked) credential by its id.
    func credential(id: String) throws -> CredentialRecord?
    /// Saves a dashboard session (its id only as a hash).
    func createSession(_ session: DashboardSession) throws
    /// The unexpired session with this id hash, if its credential is still live.
    func session(idHash: [UInt8], now: Int64) throws -> DashboardSession?
    func deleteSession(idHash: [UInt8]) throws
    /// Saves a one-time sign-in link (its code only as a hash).
    func createLoginLink(codeHash: [UInt8], credentialID: String, expiresAt: Int64) throws
    /// Uses up a sign-in link: the credential id if the link existed and had not expired.
    func consumeLoginLink(codeHash: [UInt8], now: Int64) throws -> String?
    /// Revokes live credentials by id or by exact name; how many were revoked.
    func revokeCredentials(id: String?, name: String?, atMilliseconds: Int64) throws -> Int
    /// Revokes an ingest key of an app; `false` if there was no such live key.
    func revokeIngestKey(app: String, keyID: String, atMilliseconds: Int64) throws -> Bool

    // MARK: Remote config

    /// Every app's stored config document.
    func configDocuments() throws -> [ConfigRecord]
    /// Saves a new version of an app's config document and its audit row, if the stored
    /// version is still `expectedVersion` (0: none stored yet).
    /// - Throws: `StoreError.conflict` when another change came first.
    func saveConfig(_ record: ConfigRecord, expectedVersion: Int, before: String?) throws
    /// An app's config versions without their documents, newest first: at most `limit`,
    /// those older than `before` when given (the history's pages).
    func configVersions(app: String, before: Int?, limit: Int) throws -> [ConfigVersion]
    /// One change (version) of an app's config.
    func configChange(app: String, version: Int) throws -> ConfigChange?
    /// Test crashes reported per install on a UTC day (days since the epoch) — for every app;
    /// at most `limit` rows.
    func testCrashCounts(day: Int64, limit: Int) throws -> [TestCrashCount]
    /// Test crashes one install of an app reported on a UTC day.
    func testCrashCount(app: String, installID: String, day: Int64) throws -> Int
    /// Distinct installs with a session start since a time, with their release, channel and idiom.
    func recentInstalls(app: String, since: Int64, limit: Int) throws -> [RecentInstall]

    // MARK: Alerts

    /// Saves a webhook of an app. - Throws: `StoreError.unknownApp`.
    func createAlertHook(_ hook: AlertHookRecord) throws
    /// An app's hooks, oldest first (with their secrets: the server never lists those).
    func alertHooks(app: String) throws -> [AlertHookRecord]
    func alertHook(id: String) throws -> AlertHookRecord?
    /// Deletes a hook no rule sends to, with its deliveries.
    func deleteAlertHook(app: String, id: String) throws -> AlertHookDeletion
    /// Saves a rule. - Throws: `StoreError.unknownApp` when its hook is not one of the app's.
    func createAlertRule(_ rule: AlertRuleRecord) throws
    /// The rules of an app, or of every app when `app` is nil, oldest first.
    func alertRules(app: String?) throws -> [AlertRuleRecord]
    /// Deletes a rule and its firings; `false` if the app had no such rule.
    func deleteAlertRule(app: String, id: String) throws -> Bool
    /// The conditions of an app's rules that fired and have not cleared.
    func alertFirings(app: String) throws -> [AlertFiringRecord]
    /// In one transaction: deletes the cleared firings, stores each alert's firings and — when
    /// at least one of them was not already firing — its delivery. Returns the ids of the
    /// alerts stored.
    func recordAlerts(_ alerts: [NewAlert], cleared: [AlertFiringRecord]) throws -> [String]
    /// The last ISO week (`2026-W48`) whose digest was queued for a hook, if any.
    func alertDigestWeek(hookID: String) throws -> String?
    /// In one transaction: records `week` as the hook's last digest week and queues its
    /// delivery — unless that week was already queued (or the hook is gone): then `false`.
    func queueAlertDigest(_ delivery: AlertDeliveryRecord, week: String) throws -> Bool
    /// Queues a delivery (a test); its row id.
    func enqueueAlertDelivery(_ delivery: AlertDeliveryRecord) throws -> Int64
    /// Pending deliveries whose next attempt is due, the earliest first: at most `perHook` of
    /// each hook (so a dead hook's backlog leaves room for the others), `limit` in all.
    func dueAlertDeliveries(now: Int64, limit: Int, perHook: Int) throws -> [AlertDeliveryRecord]
    /// Records how an attempt ended (a delivery no longer pending is left as it is).
    func recordAlertAttempt(deliveryID: Int64, _ attempt: AlertAttempt) throws
    /// A hook's deliveries, newest first.
    func alertDeliveries(hookID: String, limit: Int) throws -> [AlertDeliveryRecord]
    /// Deletes finished deliveries past the newest `keepPerHook` of each hook.
    func pruneAlertDeliveries(keepPerHook: Int) throws

    // MARK: Guarded rollouts

    /// What people said about the app's issues (`Migrations+Triage.swift`), by fingerprint.
    func issueTriage(app: String) throws -> [IssueTriageRecord]
    /// Stores a triage change, replacing the fingerprint's row, with the pending audit row in
    /// the same transaction (the server checks the app exists first).
    func saveIssueTriage(_ record: IssueTriageRecord) throws

    /// The rollouts of `app` (every app's when `nil`), by app and rule.
    func rollouts(app: String?) throws -> [RolloutRecord]
    /// Saves a rollout if its stored revision is still `expectedRevision` (0: none stored) and
    /// stores it as revision `expectedRevision + 1`; `false` when another save came first.
    func saveRollout(_ record: RolloutRecord, expectedRevision: Int) throws -> Bool

    // MARK: Four eyes

    /// The kinds of change of `app` that need a second person's approval (empty: none).
    func approvalRequirements(app: String) throws -> [String]
    /// Sets them (audited); throws `StoreError.unknownApp` for an app that does not exist.
    func saveApprovalRequirements(app: String, kinds: [String]) throws
    /// Stores a new proposal (audited).
    func createProposal(_ record: ProposalRecord) throws
    /// The proposals of an app, newest first, at most `limit`.
    func proposals(app: String, limit: Int) throws -> [ProposalRecord]
    /// One proposal of an app.
    func proposal(app: String, id: String) throws -> ProposalRecord?
    /// Changes a proposal's status if `decision`'s conditions hold (audited); whether it did.
    func decideProposal(app: String, id: String, _ decision: ProposalDecision) throws -> Bool

    // MARK: Audit log

    /// Appends rows to the audit log, in one transaction.
    func recordAudit(_ entries: [AuditEntry]) throws
    /// Audit rows matching `filter`, newest first: at most `limit`, those with an id below
    /// `before` when given (the pages).
    func auditEntries(_ filter: AuditFilter, before: Int64?, limit: Int) throws -> [AuditEntry]
    /// Deletes audit rows older than a time; how many went.
    func pruneAudit(before: Int64) throws -> Int

    // MARK: Operations

    /// Deletes up to `limit` of the oldest raw reports and session starts received before a
    /// time (roll-ups stay); returns how many rows went, 0 when none is that old.
    func prune(receivedBefore: Int64, limit: Int) throws -> Int
    /// Deletes what retention no longer needs once the raw rows before a time are gone: up to
    /// `limit` unlisted releases whose newest row arrived before it (with every row of them:
    /// roll-ups, marks, values), install origins of installs not seen since, and the hourly
    /// counts of the session limits of hours before it. How many rows went; 0 when none.
    func pruneDerived(receivedBefore: Int64, limit: Int) throws -> Int
    /// Returns free pages to the file system; the database file's size in bytes after.
    func reclaimSpace() throws -> Int64

    /// Throws unless the store can be written to right now.
    func checkWritable() throws
    /// The database as this node last reached it, for a store across the network (readiness,
    /// logs, metrics read it instead of calling the database); `nil` for a store in a local file.
    var reachability: StoreReachability? { get }
    /// Calls `observer` each time the database is lost or back (never for a local file).
    func observeReachability(_ observer: @escaping @Sendable (StoreReachability) -> Void)
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

/// What a store shared by several `watchdogd` (PostgreSQL) adds: changes other nodes made.
public protocol SharedTelemetryStore: TelemetryStore {
    /// Calls `onChange` with the app whose config another node (or this one) saved, within
    /// about a second — and with `nil` every `fallbackSeconds` and after a lost connection, when
    /// a change may have been missed — until the returned watch is stopped.
    func watchConfigChanges(fallbackSeconds: Double, _ onChange: @escaping @Sendable (String?) -> Void) -> any StoreWatch
}

/// A background watch of a shared store.
public protocol StoreWatch: Sendable {
    /// Stops it; returns once no callback runs any more.
    func stop()
}
