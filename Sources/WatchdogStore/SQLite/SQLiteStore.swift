import Foundation
import GRDB

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
    /// The database file.
    public let path: String

    /// Opens (creating if needed) `watchdog.sqlite3` in `directory` and migrates it.
    public init(directory: String, synchronous: Synchronous = .full) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        path = (directory as NSString).appendingPathComponent("watchdog.sqlite3")
        var configuration = Configuration()
        // Administrative commands (`watchdogd apps add`) write while `serve` runs.
        configuration.busyMode = .timeout(10)
        configuration.maximumReaderCount = 4
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous.rawValue)")
            try db.execute(sql: "PRAGMA foreign_keys = ON")
            // 32 MiB of page cache for the writer, so the interior pages of the id and session
            // indexes stay in memory at millions of rows; readers keep SQLite's 2 MiB, so
            // memory stays flat however much an export reads.
            if !db.configuration.readonly { try db.execute(sql: "PRAGMA cache_size = -32768") }
            // Checkpoint every ~32 MiB of WAL instead of ~4 MiB: a page dirtied by many
            // commits is copied into the database once (measured: fewer bytes written per report).
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 8192")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        let journalMode = try pool.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        guard journalMode?.lowercased() == "wal" else {
            throw DatabaseError(resultCode: .SQLITE_ERROR, message: "journal_mode is \(journalMode ?? "unknown"), expected wal")
        }
        try Migrations.migrator.migrate(pool)
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
}

