import Foundation
import GRDB
import Testing
@testable import WatchdogStore

/// A new data dir's file has 8 KiB pages (a stored report's row is about 470 B: 17 fit a page
/// where 8 fitted 4 KiB); a file made before keeps its page size and opens as it did.
@Suite struct PageSizeTests {
    static func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("watchdog-pages-\(UUID().uuidString)")
    }

    static func pragma(_ name: String, at directory: URL) throws -> Int? {
        try DatabaseQueue(path: directory.appendingPathComponent("watchdog.sqlite3").path).read { try Int.fetchOne($0, sql: "PRAGMA \(name)") }
    }

    @Test func aNewDataDirHasEightKiBPagesAndCheckpointsEveryThirtyTwoMiB() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(directory: directory.path)
        #expect(try store.pool.read { try Int.fetchOne($0, sql: "PRAGMA wal_autocheckpoint") } == 4096)
        #expect(try Self.pragma("page_size", at: directory) == 8192)
    }

    @Test func anExistingFileKeepsItsPageSize() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: directory.appendingPathComponent("watchdog.sqlite3").path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA page_size = 4096")
            try db.execute(sql: "CREATE TABLE before_issue_26 (x)")
        }
        try queue.close()
        let store = try SQLiteStore(directory: directory.path)
        #expect(try store.pool.read { try Int.fetchOne($0, sql: "PRAGMA wal_autocheckpoint") } == 8192, "32 MiB of 4 KiB pages")
        #expect(try Self.pragma("page_size", at: directory) == 4096)
    }
}
