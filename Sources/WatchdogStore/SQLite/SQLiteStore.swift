import Foundation
import GRDB
import Locking

/// The embedded store: one SQLite file in WAL mode, through GRDB on the system SQLite.
///
/// Writes are serialized by GRDB's writer; reads run concurrently from the WAL snapshot.
/// `synchronous` decides what a commit survives: `full` (default) also a power loss,
/// `normal` only a crash of the process (SQLite: "WAL mode is always consistent with
/// synchronous=NORMAL, but WAL mode does lose durability").
public final class SQLiteStore: TelemetryStore {
    /// How hard SQLite flushes a commit to disk.
    public enum Synchronous: String, Sendable, CaseIterable {
        case full = "FULL"
        case normal = "NORMAL"
    }

    let pool: DatabasePool
    /// `release_refs` and `mark_values` numbers already committed (the writer's lookups;
    /// numbers are never deleted or renumbered).
    let markRefs = Locked(MarkRefs.Numbers())
    /// Value numbers `markRefs` keeps at most (a few MiB of screen names): a real app has a few
    /// hundred screens, while each release may add 500 new ones (`CardinalityLimits`).
    static let valueNumbersInMemory = 16_384
    /// Release numbers `markRefs` keeps at most: an app ships a few releases a week, while a
    /// client with the public ingest key can invent a version per report, and each is stored
    /// (as an unlisted release) and numbered. Past the bound a release's number is read from
    /// `release_refs` by each transaction that needs it (one upsert), so invented versions cost
    /// rows, which retention's limits bound, and not the writer's memory.
    static let releaseNumbersInMemory = 4_096
    /// The database file.
    public let path: String
    /// Checked after each ingest commit (see `JournalProbe`).
    let journalProbe: JournalProbe
    /// Active reports of one fingerprint in one session past this many are stored but counted
    /// apart as `flooded`; 0: no cap.
    public let floodCap: Int

    /// The page size of a new database file.
    static let pageSize = 8192

    /// Opens (creating if needed) `watchdog.sqlite3` in `directory` and migrates it.
    public init(directory: String, synchronous: Synchronous = .full, floodCap: Int = SQLiteStore.defaultFloodCap) throws {
        self.floodCap = floodCap
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        path = (directory as NSString).appendingPathComponent("watchdog.sqlite3")
        journalProbe = JournalProbe(directory: directory)
        var configuration = Configuration()
        // Administrative commands (`watchdogd apps add`) write while `serve` runs.
        configuration.busyMode = .timeout(10)
        configuration.maximumReaderCount = 4
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous.rawValue)")
            try db.execute(sql: "PRAGMA foreign_keys = ON")
            // 8 MiB of page cache for the writer, so the interior pages of the id and session
            // indexes stay in memory at millions of rows (16 against 32 MiB measured at 10 M
            // stored reports: ingest as fast, time-ordered or random ids, 20 MiB less at the
            // peak; 8 against 16 MiB at 1 M: as fast, 10 MiB less at the peak — issue 26);
            // readers keep SQLite's 2 MiB, so memory stays flat however much an export reads.
            if !db.configuration.readonly { try db.execute(sql: "PRAGMA cache_size = -8192") }
            // 8 KiB pages for a new file (before WAL is set up; an existing file keeps its
            // size): a stored report's row is about 470 B, of which a 4 KiB page holds 8 and an
            // 8 KiB page 17, so less of each page is slack.
            if !db.configuration.readonly { try db.execute(sql: "PRAGMA page_size = \(Self.pageSize)") }
            let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
            // Checkpoint every ~32 MiB of WAL instead of ~4 MiB: a page dirtied by many
            // commits is copied into the database once (measured: fewer bytes written per report).
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \((32 << 20) / max(pageSize, 512))")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        // GRDB's WAL set-up runs `PRAGMA synchronous = NORMAL` on the writer after
        // `prepareDatabase`, which silently turned `full` into `normal`: commits were not
        // fsync'd and a 202 did not survive a power loss (found by Tests/ReadOnlyStore: an
        // ext4 that aborted its journal lost every acknowledged report). Set it again on the
        // writer, the only connection that commits, and read it back.
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous.rawValue)")
        }
        let effective = try writerSynchronous()
        guard effective == synchronous else {
            throw DatabaseError(resultCode: .SQLITE_ERROR, message: "synchronous is \(effective.map(\.rawValue) ?? "unknown") on the writer, expected \(synchronous.rawValue)")
        }
        let journalMode = try pool.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        guard journalMode?.lowercased() == "wal" else {
            throw DatabaseError(resultCode: .SQLITE_ERROR, message: "journal_mode is \(journalMode ?? "unknown"), expected wal")
        }
        try pool.writeWithoutTransaction { db in
            // A new, empty database gets incremental auto-vacuum, so retention can hand pages
            // back to the file system instead of only reusing them. (It needs a VACUUM to take
            // effect, instant while the file is empty; an existing database keeps its mode.)
            let tables = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") ?? 0
            if tables == 0, try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") != 2 {
                try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
                try db.execute(sql: "VACUUM")
            }
        }
        try Migrations.migrator.migrate(pool)
        // A migration that rebuilt tables (2026-11-23-compact-storage) leaves their old pages
        // free; with incremental auto-vacuum they go back to the file system now. Best effort:
        // a data dir that cannot shrink (read-only file system, older vacuum mode) still opens.
        try? pool.writeWithoutTransaction { db in
            if try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") == 2, try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0 > 4096 {
                try db.execute(sql: "PRAGMA incremental_vacuum")
            }
        }
    }

    /// Reports of one fingerprint a session may send before the rest count as flooded.
    public static let defaultFloodCap = 10

    /// The writer connection's `PRAGMA synchronous`, as SQLite reports it (`nil` for OFF or EXTRA).
    public func writerSynchronous() throws -> Synchronous? {
        let level = try pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        switch level {
        case 2: return .full
        case 1: return .normal
        default: return nil
        }
    }

    /// The migrations not yet applied to the database (empty after `init`).
    public func pendingMigrations() throws -> [String] {
        let applied = try pool.read { db in try Migrations.migrator.appliedIdentifiers(db) }
        return Migrations.migrator.migrations.filter { !applied.contains($0) }
    }

    /// `PRAGMA integrity_check` output: `["ok"]` for a healthy file.
    public func integrityCheck() throws -> [String] {
        try pool.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    }

    /// Cheap enough for every readiness probe: no write transaction (that would queue behind
    /// the ingest writer), only whether SQLite could write the files.
    public func checkWritable() throws {
        let directory = (path as NSString).deletingLastPathComponent
        for file in [path, directory] where access(file, W_OK) != 0 {
            throw DatabaseError(resultCode: .SQLITE_READONLY, message: "\(file) is not writable (errno \(errno))")
        }
    }

    /// Moves the WAL into the database file and truncates it; `serve` does this at shutdown.
    /// Administrative commands must not: it would wait for, and block, the running server.
    public func checkpoint() throws {
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    public func close() throws {
        try pool.close()
    }

    /// Copies the database to `file` with SQLite's online backup API, from one read snapshot,
    /// while other connections (a running `serve`) keep writing. The copy is written beside
    /// `file` and renamed into place when complete and checked.
    /// - Parameter progress: pages copied so far and in all.
    public func backup(to file: String, progress: @escaping (Int, Int) -> Void) throws {
        let temporary = file + ".partial"
        try? FileManager.default.removeItem(atPath: temporary)
        do {
            let destination = try DatabaseQueue(path: temporary)
            try pool.backup(to: destination, pagesPerStep: 1024) { step in
                progress(step.totalPageCount - step.remainingPageCount, step.totalPageCount)
            }
            let check = try destination.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
            try destination.close()
            guard check == ["ok"] else {
                throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "the backup copy failed its check: \(check.prefix(3).joined(separator: "; "))")
            }
            try? FileManager.default.removeItem(atPath: temporary + "-wal")
            try? FileManager.default.removeItem(atPath: temporary + "-shm")
            guard rename(temporary, file) == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file]) }
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        }
    }

    /// Replaces this database's content with a backup file's (checked first), then migrates it.
    /// Only while nothing else uses the data dir.
    public func restore(from file: String) throws {
        var configuration = Configuration()
        configuration.readonly = true
        let source = try DatabaseQueue(path: file, configuration: configuration)
        let check = try source.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
        guard check == ["ok"] else {
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "\(file) is not a sound database: \(check.prefix(3).joined(separator: "; "))")
        }
        guard try source.read({ db in try db.tableExists("reports") && db.tableExists("grdb_migrations") }) else {
            throw DatabaseError(resultCode: .SQLITE_NOTADB, message: "\(file) is not a watchdogd backup (no reports table)")
        }
        try source.backup(to: pool)
        try source.close()
        markRefs.withLock { $0 = MarkRefs.Numbers() }
        try Migrations.migrator.migrate(pool)
    }
}

