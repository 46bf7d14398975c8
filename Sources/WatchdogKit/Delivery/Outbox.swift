import Foundation
import WatchdogWire
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reports and session starts on disk, waiting for upload: one file each, written with
/// `fsync` and an atomic rename, so an item either survives the app being killed whole or
/// was never acknowledged to the caller. Files go once the server has answered for them.
///
/// The outbox is bounded (`Capacity`, per kind): past it the oldest items are evicted. Items
/// the server refuses as poison are moved aside to `quarantine/` (the newest
/// `quarantineLimit` kept for inspection). Both are counted per release in a small ledger
/// (`dropped.json`) that the uploader sends as `client_dropped` with the next reports batch.
public final class Outbox: ReportSink, @unchecked Sendable {
    /// The two kinds of items, each in its own folder and batch key.
    public enum Kind: String, Sendable, CaseIterable {
        /// Session starts (`POST /v1/sessions`), sent first: the denominator of the server's rates.
        case sessions
        /// Glitch and lock reports (`POST /v1/reports`).
        case reports
    }

    /// An item waiting for upload.
    public struct Item: Sendable {
        /// The item's file in the outbox.
        public var file: URL
        /// The item's JSON, as it is sent.
        public var json: Data
    }

    /// How much each kind may hold before the oldest items are evicted.
    public struct Capacity: Sendable, Equatable {
        /// Items per kind.
        public var items: Int
        /// Bytes per kind.
        public var bytes: Int

        /// The default holds days of reports from a glitchy build, in little space.
        public init(items: Int = 5_000, bytes: Int = 20 << 20) {
            self.items = items
            self.bytes = bytes
        }
    }

    /// Where the items, the quarantine and the drop ledger live.
    public let directory: URL
    /// The bound per kind; the oldest items are evicted past it.
    public let capacity: Capacity
    /// Quarantined files kept on disk at most (older ones are deleted; all stay counted).
    public let quarantineLimit: Int
    /// The release dropped items count under when their own is unreadable (the app's).
    public let fallbackRelease: Release
    private let lock = NSLock()
    private var sequence = 0
    /// Items and bytes per kind as of the last scan, plus writes, minus removals since (with
    /// `lock`); a full scan runs only when these say the capacity may be exceeded.
    private var usage: [Kind: (items: Int, bytes: Int)] = [:]

    /// - Parameters:
    ///   - directory: where the items, the quarantine and the drop ledger live (created if missing).
    ///   - capacity: the bound per kind; the oldest items are evicted past it.
    ///   - quarantineLimit: quarantined files kept on disk at most.
    ///   - fallbackRelease: the app's release, for dropped items whose JSON does not say theirs.
    public init(directory: URL, capacity: Capacity = Capacity(), quarantineLimit: Int = 50,
                fallbackRelease: Release = Release(version: "unknown", build: "unknown")) throws {
        self.directory = directory
        self.capacity = capacity
        self.quarantineLimit = quarantineLimit
        self.fallbackRelease = fallbackRelease
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        FileProtection.protectDirectory(directory)
        for kind in Kind.allCases {
            try FileManager.default.createDirectory(at: folder(kind), withIntermediateDirectories: true)
            removeTornWrites(in: folder(kind))
        }
    }

    /// An outbox whose folders are made now if they can be, else at the first write that can:
    /// the agent's, which must start even before the first unlock after boot.
    init(lenientDirectory directory: URL, capacity: Capacity, fallbackRelease: Release) {
        self.directory = directory
        self.capacity = capacity
        self.quarantineLimit = 50
        self.fallbackRelease = fallbackRelease
        if (try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)) != nil {
            FileProtection.protectDirectory(directory)
        }
        for kind in Kind.allCases {
            try? FileManager.default.createDirectory(at: folder(kind), withIntermediateDirectories: true)
            removeTornWrites(in: folder(kind))
        }
    }

    /// Deletes everything waiting — reports, session starts, the quarantine and the drop counts
    /// not yet sent (`WatchdogAgent.deleteUnsentData()`).
    public func removeAll() {
        lock.lock()
        defer { lock.unlock() }
        for kind in Kind.allCases {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder(kind).path)) ?? []
            for name in names { try? FileManager.default.removeItem(at: folder(kind).appendingPathComponent(name)) }
            usage[kind] = nil
        }
        try? FileManager.default.removeItem(at: directory.appendingPathComponent("quarantine", isDirectory: true))
        try? FileManager.default.removeItem(at: ledgerFile)
    }

    /// A `.tmp` file is a write the app was killed in the middle of: never acknowledged to its
    /// caller, never complete. Only old ones are removed, so a write in progress is safe.
    private func removeTornWrites(in folder: URL) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for name in names where name.hasSuffix(".tmp") {
            let file = folder.appendingPathComponent(name)
            let modified = (try? FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date) ?? .distantPast
            if Date().timeIntervalSince(modified) > 60 { try? FileManager.default.removeItem(at: file) }
        }
    }

    /// Saves a report durably (evicting the oldest past `capacity`), its text fields first fitted
    /// to the server's limits (`ReportFitting`): what is kept is what the server can take.
    public func persist(_ report: Report) throws {
        try write(JSONEncoder().encode(ReportFitting.fit(report)), kind: .reports, id: report.id)
    }

    /// Saves a session start durably (evicting the oldest past `capacity`).
    public func persist(_ session: SessionStart) throws {
        try write(JSONEncoder().encode(session), kind: .sessions, id: session.id)
    }

    /// Whether an item with this id is waiting (tests check a report exists before a crash).
    public func contains(id: String, kind: Kind = .reports) -> Bool {
        (try? FileManager.default.contentsOfDirectory(atPath: folder(kind).path))?.contains { $0.hasSuffix("-\(id).json") } ?? false
    }

    /// The oldest waiting items of a kind, at most `limit` of them and `maxBytes` together.
    public func pending(_ kind: Kind, limit: Int, maxBytes: Int) -> [Item] {
        let folder = folder(kind)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
        var items: [Item] = []
        var bytes = 0
        for name in names.sorted() {
            let file = folder.appendingPathComponent(name)
            guard name.hasSuffix(".json"), let json = try? Data(contentsOf: file) else { continue }
            if !items.isEmpty, bytes + json.count > maxBytes { break }
            items.append(Item(file: file, json: json))
            bytes += json.count
            if items.count == limit { break }
        }
        return items
    }

    /// Items of a kind waiting.
    public func count(_ kind: Kind) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder(kind).path)) ?? []).filter { $0.hasSuffix(".json") }.count
    }

    /// Deletes items the server has answered for.
    public func remove(_ items: [Item]) {
        for item in items { try? FileManager.default.removeItem(at: item.file) }
        forget(items)
    }

    private func forget(_ items: [Item]) {
        lock.lock()
        defer { lock.unlock() }
        for item in items {
            guard let kind = Kind(rawValue: item.file.deletingLastPathComponent().lastPathComponent), let used = usage[kind] else { continue }
            usage[kind] = (max(0, used.items - 1), max(0, used.bytes - item.json.count))
        }
    }

    // MARK: - Dropped items

    /// Moves items the server refused as poison to `quarantine/<kind>/` and counts them.
    public func quarantine(_ items: [Item], kind: Kind) {
        let folder = directory.appendingPathComponent("quarantine", isDirectory: true).appendingPathComponent(kind.rawValue, isDirectory: true)
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var moved: [Release] = []
        for item in items {
            let target = folder.appendingPathComponent(item.file.lastPathComponent)
            try? FileManager.default.removeItem(at: target)
            // Moved aside, or deleted if it cannot be (it must not block the outbox either way).
            if (try? FileManager.default.moveItem(at: item.file, to: target)) != nil || (try? FileManager.default.removeItem(at: item.file)) != nil {
                moved.append(release(of: item.json))
            }
        }
        let kept = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
        for name in kept.dropLast(quarantineLimit) { try? FileManager.default.removeItem(at: folder.appendingPathComponent(name)) }
        forget(items)
        count(moved.map { ($0, DropCount(evicted: 0, quarantined: 1)) })
    }

    /// Files in quarantine now (at most `quarantineLimit` per kind).
    public func quarantinedFiles(_ kind: Kind) -> Int {
        let folder = directory.appendingPathComponent("quarantine", isDirectory: true).appendingPathComponent(kind.rawValue, isDirectory: true)
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).count
    }

    /// Drop counts not yet acknowledged by the server, oldest first.
    public func unsentDrops() -> [ClientDropped] {
        lock.lock()
        defer { lock.unlock() }
        return readLedger().map(\.dropped)
    }

    /// The counts to send with the next reports batch. Once handed out an entry is sealed: it
    /// keeps its id and numbers until `acknowledgeDrop` (new drops go to a new entry), so a
    /// re-sent batch is counted once by the server.
    public func nextDropToSend() -> ClientDropped? {
        lock.lock()
        defer { lock.unlock() }
        var ledger = readLedger()
        guard !ledger.isEmpty else { return nil }
        if !ledger[0].sealed {
            ledger[0].sealed = true
            writeLedger(ledger)
        }
        return ledger[0].dropped
    }

    /// The server stored (or refused for good) the counts with this id.
    public func acknowledgeDrop(id: String?) {
        lock.lock()
        defer { lock.unlock() }
        var ledger = readLedger()
        ledger.removeAll { $0.dropped.id == id }
        writeLedger(ledger)
    }

    private struct DropCount {
        var evicted: Int
        var quarantined: Int
    }

    private struct LedgerEntry: Codable {
        var dropped: ClientDropped
        var sealed: Bool
    }

    private var ledgerFile: URL { directory.appendingPathComponent("dropped.json") }

    /// Called with `lock` held.
    private func readLedger() -> [LedgerEntry] {
        guard let data = try? Data(contentsOf: ledgerFile) else { return [] }
        return (try? JSONDecoder().decode([LedgerEntry].self, from: data)) ?? []
    }

    /// Called with `lock` held.
    private func writeLedger(_ ledger: [LedgerEntry]) {
        if ledger.isEmpty {
            try? FileManager.default.removeItem(at: ledgerFile)
        } else if let data = try? JSONEncoder().encode(ledger) {
            try? data.write(to: ledgerFile, options: .atomic)
        }
    }

    private func count(_ drops: [(Release, DropCount)]) {
        guard !drops.isEmpty else { return }
        lock.lock()
        defer { lock.unlock() }
        var ledger = readLedger()
        for (release, drop) in drops {
            let key = Release(version: release.version, build: release.build)
            if let index = ledger.firstIndex(where: { !$0.sealed && $0.dropped.release == key }) {
                ledger[index].dropped.evicted = min(ledger[index].dropped.evicted + drop.evicted, ClientDropped.maximumCount)
                ledger[index].dropped.quarantined = min(ledger[index].dropped.quarantined + drop.quarantined, ClientDropped.maximumCount)
            } else {
                ledger.append(LedgerEntry(dropped: ClientDropped(id: TimeOrderedID.make(), release: key, evicted: drop.evicted,
                                                                 quarantined: drop.quarantined), sealed: false))
            }
        }
        writeLedger(ledger)
    }

    /// The release an item's JSON names, or the fallback when it is unreadable or invalid.
    private func release(of json: Data) -> Release {
        struct Named: Decodable { var release: Release }
        guard let release = (try? JSONDecoder().decode(Named.self, from: json))?.release, ReleaseCheck.isPlausible(release) else {
            return fallbackRelease
        }
        return release
    }

    /// Evicts the oldest items of a kind past `capacity`, after a write of `written` bytes.
    private func evictIfFull(_ kind: Kind, written: Int) {
        lock.lock()
        let known = usage[kind].map { (items: $0.items + 1, bytes: $0.bytes + written) }
        if let known { usage[kind] = known }
        lock.unlock()
        if let known, known.items <= capacity.items, known.bytes <= capacity.bytes { return }
        let folder = folder(kind)
        let keys: [URLResourceKey] = [.fileSizeKey]
        guard let files = try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: keys) else { return }
        var items = files.filter { $0.lastPathComponent.hasSuffix(".json") }.sorted { $0.lastPathComponent < $1.lastPathComponent }
            .map { (file: $0, size: (try? $0.resourceValues(forKeys: Set(keys)).fileSize) ?? 0) }
        var bytes = items.reduce(0) { $0 + $1.size }
        var evicted: [(Release, DropCount)] = []
        while items.count > 1, items.count > capacity.items || bytes > capacity.bytes {
            let oldest = items.removeFirst()
            bytes -= oldest.size
            let json = (try? Data(contentsOf: oldest.file)) ?? Data()
            if (try? FileManager.default.removeItem(at: oldest.file)) != nil { evicted.append((release(of: json), DropCount(evicted: 1, quarantined: 0))) }
        }
        lock.lock()
        usage[kind] = (items.count, bytes)
        lock.unlock()
        count(evicted)
    }

    private func folder(_ kind: Kind) -> URL {
        directory.appendingPathComponent(kind.rawValue, isDirectory: true)
    }

    private func write(_ data: Data, kind: Kind, id: String) throws {
        lock.lock()
        sequence += 1
        let number = sequence
        lock.unlock()
        // Names sort by creation: milliseconds, then a per-process sequence.
        let stamp = String(format: "%015lld-%06d", Int64(Date().timeIntervalSince1970 * 1000), number % 1_000_000)
        let final = folder(kind).appendingPathComponent("\(stamp)-\(id).json")
        let temporary = final.appendingPathExtension("tmp")
        var descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        if descriptor < 0, errno == ENOENT, (try? FileManager.default.createDirectory(at: folder(kind), withIntermediateDirectories: true)) != nil {
            // Folders that could not be made when the outbox was (before the first unlock).
            descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        }
        guard descriptor >= 0 else { throw OutboxError(message: "cannot create \(temporary.path): errno \(errno)") }
        FileProtection.protectFile(atPath: temporary.path)
        var written = 0
        let ok: Bool = data.withUnsafeBytes { buffer in
            while written < buffer.count {
                let count = systemWrite(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if count <= 0 { return false }
                written += count
            }
            return fsync(descriptor) == 0
        }
        close(descriptor)
        guard ok, rename(temporary.path, final.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw OutboxError(message: "cannot write \(final.path): errno \(errno)")
        }
        // The rename itself is made durable by syncing the folder.
        let folderDescriptor = open(folder(kind).path, O_RDONLY)
        if folderDescriptor >= 0 {
            fsync(folderDescriptor)
            close(folderDescriptor)
        }
        evictIfFull(kind, written: data.count)
    }
}

/// The outbox could not save an item.
public struct OutboxError: Error, CustomStringConvertible {
    /// What failed, and with which system error.
    public var message: String
    public var description: String { message }
}

private func systemWrite(_ descriptor: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, pointer, count)
}

/// The shape rules a release must meet to be counted under its own name (the server's).
enum ReleaseCheck {
    static func isPlausible(_ release: Release) -> Bool {
        [release.version, release.build].allSatisfy { text in
            !text.isEmpty && text.unicodeScalars.count <= Limits.versionLength && !text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
        }
    }
}
