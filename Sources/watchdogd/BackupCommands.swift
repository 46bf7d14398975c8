import ArgumentParser
import Foundation
import WatchdogStore
#if canImport(Glibc)
import Glibc
#endif

struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the database to a file while serve keeps running (SQLite's online backup API).",
        discussion: "The copy is one consistent snapshot, checked with PRAGMA quick_check, and appears under its name only when complete. Prints its path on stdout."
    )

    @OptionGroup var common: CommonOptions

    @Option(name: .customLong("to"), help: "The backup file to write.")
    var destination: String

    @Flag(help: "Replace the file if it exists.")
    var force = false

    func run() throws {
        if FileManager.default.fileExists(atPath: destination), !force {
            throw CLIError("\(destination) exists; pass --force to replace it")
        }
        let store = try common.openSQLiteStore()
        let started = Date()
        let terminal = isatty(STDERR_FILENO) == 1
        var lastShown = -1
        try store.backup(to: destination) { done, total in
            guard terminal, total > 0 else { return }
            let percent = done * 100 / total
            if percent != lastShown {
                lastShown = percent
                FileHandle.standardError.write(Data("\rbacking up: \(percent) % of \(total) pages".utf8))
            }
        }
        if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
        try store.close()
        let size = (try? FileManager.default.attributesOfItem(atPath: destination)[.size] as? Int) ?? 0
        say("backed up \(store.path) to \(destination): \(size / 1_048_576) MiB in \(String(format: "%.1f", Date().timeIntervalSince(started))) s, quick_check ok")
        emit(destination)
    }
}

struct Restore: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replace the data dir's database with a backup file (stop serve first).",
        discussion: "The file is checked (PRAGMA quick_check, watchdogd schema) before anything is replaced, then migrated to the current schema."
    )

    @OptionGroup var common: CommonOptions

    @Option(name: .customLong("from"), help: "The backup file to restore.")
    var source: String

    @Flag(help: "Replace a database that has data.")
    var force = false

    func run() throws {
        guard FileManager.default.fileExists(atPath: source) else { throw CLIError("no file \(source)") }
        let lock = try ServeLock(dataDirectory: common.resolvedDataDir)
        guard lock.tryLock() else {
            throw CLIError("watchdogd serve is running on \(common.resolvedDataDir); stop it before restoring")
        }
        let store = try common.openSQLiteStore()
        if !force, try !store.apps().isEmpty {
            throw CLIError("\(store.path) already has data; pass --force to replace it with \(source)")
        }
        try store.restore(from: source)
        try store.checkpoint()
        try store.close()
        say("restored \(source) into \(store.path)")
    }
}

/// An exclusive lock on `serve.lock` in the data dir: held by `serve` for its whole run, so
/// `restore` can refuse to pull the database from under it.
final class ServeLock {
    private let descriptor: Int32

    init(dataDirectory: String) throws {
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        descriptor = open((dataDirectory as NSString).appendingPathComponent("serve.lock"), O_RDWR | O_CREAT, 0o600)
        guard descriptor >= 0 else { throw CLIError("cannot open the lock file in \(dataDirectory): errno \(errno)") }
    }

    /// `false` when another process holds it.
    func tryLock() -> Bool {
        flock(descriptor, LOCK_EX | LOCK_NB) == 0
    }

    deinit { close(descriptor) }
}
