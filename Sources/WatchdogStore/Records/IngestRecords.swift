/// A validated report, flattened into what the store indexes and counts, plus its full JSON.
public struct ReportRecord: Sendable {
    public var id: String
    public var app: String
    public var version: String
    public var build: String
    public var channel: String?
    public var kind: String
    public var occurredAt: Int64
    public var sessionID: String?
    public var installID: String?
    /// Reports from a non-`active` app state are "suspect": counted apart from headline rates.
    public var isSuspect: Bool
    public var screen: String?
    public var autoFixed: Bool
    public var testCrash: Bool
    /// What groups reports into issues: kind + screen + view + keyboard mode.
    public var fingerprint: String
    public var viewName: String?
    public var keyboardMode: String?
    public var keyboardHeight: Double?
    public var inputMode: String?
    public var deviceModel: String?
    public var idiom: String?
    public var windowHeight: Double?
    /// The report's JSON as the store keeps it (`StoredBody`), compressed by `init` on the
    /// caller's thread so the one writer thread never does.
    let storedBody: [UInt8]
    /// Past the per-session, per-fingerprint cap: stored, but counted apart. Set by the store.
    public var isFlooded = false
    /// Its session has no counted start (never started, or its start was marked implausible):
    /// stored and counted as a report, but it makes no session affected. Set by the store.
    public var hasUnknownSession = false
    /// Set by the store: its session's start carried the assertion of its install's key.
    public var hasAttestedSession = false
    /// The app's admission, applied by the store in the transaction (`.open` when not set).
    public var policy = IngestPolicy.open

    public init(id: String, app: String, version: String, build: String, channel: String?, kind: String, occurredAt: Int64, sessionID: String?, installID: String?, isSuspect: Bool, screen: String?, autoFixed: Bool, testCrash: Bool,
                fingerprint: String, viewName: String? = nil, keyboardMode: String? = nil, keyboardHeight: Double? = nil, inputMode: String? = nil,
                deviceModel: String? = nil, idiom: String? = nil, windowHeight: Double? = nil, body: String) {
        self.id = id
        self.app = app
        self.version = version
        self.build = build
        self.channel = channel
        self.kind = kind
        self.occurredAt = occurredAt
        self.sessionID = sessionID
        self.installID = installID
        self.isSuspect = isSuspect
        self.screen = screen
        self.autoFixed = autoFixed
        self.testCrash = testCrash
        self.fingerprint = fingerprint
        self.viewName = viewName
        self.keyboardMode = keyboardMode
        self.keyboardHeight = keyboardHeight
        self.inputMode = inputMode
        self.deviceModel = deviceModel
        self.idiom = idiom
        self.windowHeight = windowHeight
        storedBody = StoredBody.compress(body)
    }
}

/// A validated session start.
public struct SessionRecord: Sendable {
    public var id: String
    public var app: String
    public var version: String
    public var build: String
    public var channel: String?
    public var installID: String?
    public var startedAt: Int64
    public var idiom: String?
    /// The network it arrived from (`ClientNetwork`: an IPv4 /24 or IPv6 /48), `nil` when unknown.
    public var network: String?
    /// Marks the server set before the store saw it (`farFromArrival`); the store adds the others.
    public var marks: SessionMarks
    /// It carried the assertion of the key that first attested its install (docs/security.md, "Attested
    /// installs"): only such starts count as attested.
    public var attested = false
    /// The app's limits on session starts and its admission, applied by the store in the transaction.
    public var policy: IngestPolicy
    /// The session's JSON as the store keeps it (`StoredBody`), compressed on the caller's thread.
    let storedBody: [UInt8]

    public init(id: String, app: String, version: String, build: String, channel: String?, installID: String?, startedAt: Int64, idiom: String? = nil,
                network: String? = nil, marks: SessionMarks = [], policy: IngestPolicy = .open, body: String) {
        self.id = id
        self.app = app
        self.version = version
        self.build = build
        self.channel = channel
        self.installID = installID
        self.startedAt = startedAt
        self.idiom = idiom
        self.network = network
        self.marks = marks
        self.policy = policy
        storedBody = StoredBody.compress(body)
    }
}

/// The items of one request, stored together with those of other requests.
public struct IngestBatch: Sendable {
    /// What the request posted.
    public enum Items: Sendable {
        /// Reports, with the client's count of items it dropped (`client_dropped`), counted in
        /// the same transaction.
        case reports([ReportRecord], clientDrops: ClientDropRecord?)
        case sessions([SessionRecord])
    }

    public var items: Items
    public var receivedAt: Int64
    /// The counter of the App Attest assertion the request was signed with. The store moves
    /// the key's counter on first, in the ingest transaction; if it does not move (not above
    /// the stored one), none of the batch's items are stored (`IngestOutcome.counterNotIncreasing`).
    public var assertion: AssertionCounter?

    public init(_ items: Items, receivedAt: Int64, assertion: AssertionCounter? = nil) {
        self.items = items
        self.receivedAt = receivedAt
        self.assertion = assertion
    }

    public static func reports(_ reports: [ReportRecord], receivedAt: Int64, clientDrops: ClientDropRecord? = nil) -> IngestBatch {
        IngestBatch(.reports(reports, clientDrops: clientDrops), receivedAt: receivedAt)
    }

    public static func sessions(_ sessions: [SessionRecord], receivedAt: Int64) -> IngestBatch {
        IngestBatch(.sessions(sessions), receivedAt: receivedAt)
    }

    public var count: Int {
        switch items {
        case .reports(let items, _): items.count
        case .sessions(let items): items.count
        }
    }
}

/// What one batch of a group commit came to.
public enum IngestOutcome: Sendable, Equatable {
    /// Its items went through: stored, or duplicates of stored ones.
    case stored(IngestCounts)
    /// Its assertion's counter was not above its key's (a replay, or the same assertion taken
    /// first by another request or node): none of its items were stored.
    case counterNotIncreasing
}

/// Items a client evicted from its full outbox or quarantined, for one release of an app
/// (`client_dropped` of a reports batch). An `id` is counted once.
public struct ClientDropRecord: Sendable, Equatable {
    public var id: String?
    public var app: String
    public var version: String
    public var build: String
    public var evicted: Int
    public var quarantined: Int

    public init(id: String?, app: String, version: String, build: String, evicted: Int, quarantined: Int) {
        self.id = id
        self.app = app
        self.version = version
        self.build = build
        self.evicted = evicted
        self.quarantined = quarantined
    }
}

/// What happened to one batch's items.
public struct IngestCounts: Sendable, Equatable {
    public var accepted: Int
    public var duplicates: Int
    /// Test crashes among the accepted reports, per install (duplicates are not counted): what
    /// the test-crash budget adds without reading the table again.
    public var testCrashes: [TestCrashCount] = []

    public init(accepted: Int, duplicates: Int) {
        self.accepted = accepted
        self.duplicates = duplicates
    }
}
