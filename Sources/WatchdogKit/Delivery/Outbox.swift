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
public final class Outbox: ReportSink, @unchecked Sendable {
    /// The two kinds of items, each in its own folder and batch key.
    public enum Kind: String, Sendable, CaseIterable {
        case sessions
        case reports
    }

    /// An item waiting for upload.
    public struct Item: Sendable {
        public var file: URL
        public var json: Data
    }

    public let directory: URL
    private let lock = NSLock()
    private var sequence = 0

    public init(directory: URL) throws {
        self.directory = directory
        for kind in Kind.allCases {
            try FileManager.default.createDirectory(at: folder(kind), withIntermediateDirectories: true)
            removeTornWrites(in: folder(kind))
        }
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

    public func persist(_ report: Report) throws {
        try write(JSONEncoder().encode(report), kind: .reports, id: report.id)
    }

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

    public func count(_ kind: Kind) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder(kind).path)) ?? []).filter { $0.hasSuffix(".json") }.count
    }

    public func remove(_ items: [Item]) {
        for item in items { try? FileManager.default.removeItem(at: item.file) }
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
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw OutboxError(message: "cannot create \(temporary.path): errno \(errno)") }
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
    }
}

/// The outbox could not save an item.
public struct OutboxError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

private func systemWrite(_ descriptor: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, pointer, count)
}
