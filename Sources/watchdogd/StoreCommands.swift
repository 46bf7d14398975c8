import ArgumentParser
import Foundation
import WatchdogStore
#if canImport(Glibc)
import Glibc
#endif

struct Store: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Work on whole stores: move an SQLite data dir into PostgreSQL.",
        subcommands: [StoreCopy.self]
    )
}

struct StoreCopy: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy an SQLite data dir into an empty PostgreSQL database (stop serve on the data dir first).",
        discussion: """
            Reports and sessions are copied in chunks, each committed with its progress: a copy \
            that was interrupted continues where it stopped when run again, and stores nothing \
            twice. The rest (apps, tokens, config, alerts, roll-ups) follows in one transaction. \
            At the end both sides are counted, table by table and release by release; the table \
            of counts goes to stdout and the exit status is 1 if any differs. A database holding \
            anything but an unfinished copy from this source is refused.
            """
    )

    @Option(name: .customLong("from"), help: "The source: sqlite:PATH, PATH being the data dir (the directory of watchdog.sqlite3).")
    var source: String

    @Option(name: .customLong("to"), help: "The destination PostgreSQL URL, postgres://user@host/db.")
    var destination: String

    @Option(help: "Reports and sessions per chunk (one transaction each).")
    var chunkSize = 5_000

    func validate() throws {
        guard source.hasPrefix("sqlite:"), source.count > "sqlite:".count else {
            throw ValidationError("--from must be sqlite:PATH (the data dir), got \(source)")
        }
        guard destination.hasPrefix("postgres://") || destination.hasPrefix("postgresql://") else {
            throw ValidationError("--to must be a postgres:// URL")
        }
        guard chunkSize > 0 else { throw ValidationError("--chunk-size must be positive") }
    }

    func run() throws {
        let directory = String(source.dropFirst("sqlite:".count))
        let file = (directory as NSString).appendingPathComponent("watchdog.sqlite3")
        guard FileManager.default.fileExists(atPath: file) else { throw CLIError("no watchdogd database in \(directory) (no \(file))") }
        let lock = try ServeLock(dataDirectory: directory)
        guard lock.tryLock() else {
            throw CLIError("watchdogd serve is running on \(directory); stop it before copying (the copy must see a data dir that does not change)")
        }
        let sqlite: SQLiteStore
        do {
            sqlite = try SQLiteStore(directory: directory)
        } catch {
            throw CLIError("cannot open the database in \(directory): \(error)")
        }
        defer { try? sqlite.close() }
        let postgres: PostgresStore
        do {
            postgres = try PostgresStore(url: destination, connections: 2)
        } catch {
            throw CLIError("cannot open the PostgreSQL store at \(PostgresStore.redacted(destination)): \(error)")
        }
        defer { try? postgres.close() }

        let copy = SQLiteToPostgres(source: sqlite, destination: postgres, chunkSize: chunkSize)
        let terminal = isatty(STDERR_FILENO) == 1
        var lastShown = Date.distantPast
        var lastTable = ""
        copy.progress = { progress in
            let now = Date()
            let done = progress.copied >= progress.total
            guard done || progress.table != lastTable || now.timeIntervalSince(lastShown) >= (terminal ? 0.5 : 10) else { return }
            lastShown = now
            lastTable = progress.table
            let percent = progress.total > 0 ? progress.copied * 100 / progress.total : 100
            let line = "\(progress.table): \(progress.copied) of \(progress.total) rows (\(percent) %), \(Int(progress.rowsPerSecond)) rows/s"
            if terminal {
                FileHandle.standardError.write(Data("\r\u{1B}[K\(line)\(done ? "\n" : "")".utf8))
            } else {
                say(line)
            }
        }
        say("copying \(sqlite.path) into \(postgres.displayURL)")
        let summary: SQLiteToPostgres.Summary
        do {
            summary = try copy.run()
        } catch let failure as SQLiteToPostgres.Failure {
            throw CLIError(failure.description)
        } catch {
            throw CLIError("the copy stopped: \(error); run the same command again to continue where it stopped")
        }
        say("copied \(summary.rowsCopied) rows in \(String(format: "%.1f", summary.seconds)) s (\(Int(Double(summary.rowsCopied) / max(summary.seconds, 0.001))) rows/s)\(summary.resumed ? ", continuing an interrupted copy" : "")")
        let width = max(28, summary.counts.map(\.name.count).max() ?? 0)
        func padded(_ text: String, _ count: Int, right: Bool = false) -> String {
            let padding = String(repeating: " ", count: max(0, count - text.count))
            return right ? padding + text : text + padding
        }
        emit(padded("table", width) + "  " + padded("sqlite", 12, right: true) + "  " + padded("postgres", 12, right: true))
        for count in summary.counts {
            emit(padded(count.name, width) + "  " + padded(String(count.source), 12, right: true) + "  "
                 + padded(String(count.destination), 12, right: true) + (count.matches ? "" : "  MISMATCH"))
        }
        let mismatches = summary.mismatches
        guard mismatches.isEmpty else {
            throw CLIError("\(mismatches.count) count(s) differ: \(mismatches.prefix(5).map(\.name).joined(separator: ", "))")
        }
        emit("ok: every count matches")
    }
}
