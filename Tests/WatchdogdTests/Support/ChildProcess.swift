import Foundation
import Locking
#if canImport(Glibc)
import Glibc
#endif

/// A child process (`watchdogd`, Chromium) outlived the time a test gives it: it was killed,
/// and the test fails with this instead of hanging the run.
struct ProcessTimedOut: Error, CustomStringConvertible {
    /// The command line, for the message.
    var command: String
    /// What the test was waiting for ("exit", "'listening on'").
    var waitingFor: String
    var seconds: Double
    /// What it had printed by then (its last lines), to say where it got stuck.
    var output: String

    var description: String {
        "\(command) did not \(waitingFor) within \(Int(seconds)) s; killed it (SIGKILL). Output so far: \(output.suffix(2000))"
    }
}

/// Everything a child process writes to one pipe, read on a thread of its own until EOF, so
/// the child never blocks on a full pipe and the test never blocks on a read. (`@unchecked`:
/// `Pipe` is not marked `Sendable`; only the reader thread reads its read end.)
final class PipeReader: @unchecked Sendable {
    let pipe = Pipe()
    private let bytes = Locked<[UInt8]>([])
    private let done = DispatchSemaphore(value: 0)

    /// Starts reading; call after the child has the pipe (`Process.run()`).
    func start() {
        let handle = pipe.fileHandleForReading
        let bytes = bytes, done = done
        Thread.detachNewThread {
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                bytes.withLock { $0.append(contentsOf: chunk) }
            }
            done.signal()
        }
    }

    /// What was read so far.
    var text: String { String(decoding: bytes.withLock { $0 }, as: UTF8.self) }

    /// Waits up to `seconds` for EOF (a grandchild may hold the pipe open after the child died:
    /// then what was read so far is all there is).
    func waitForEOF(seconds: Double) {
        _ = done.wait(timeout: .now() + seconds)
    }
}

enum ChildProcess {
    /// Waits up to `seconds` for `process` to exit; past that kills it with SIGKILL and throws.
    static func waitForExit(_ process: Process, seconds: Double, command: String, output: @autoclosure () -> String = "") throws(ProcessTimedOut) {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(5_000) }
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        // SIGKILL cannot be caught; a few seconds covers a process stuck in the kernel.
        let killed = Date().addingTimeInterval(10)
        while process.isRunning, Date() < killed { usleep(5_000) }
        throw ProcessTimedOut(command: command, waitingFor: "exit", seconds: seconds, output: output())
    }

    /// Runs `executable` to completion within `seconds` and returns its exit status and output.
    static func run(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
                    seconds: Double) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let stdout = PipeReader(), stderr = PipeReader()
        process.standardOutput = stdout.pipe
        process.standardError = stderr.pipe
        try process.run()
        stdout.start()
        stderr.start()
        let command = ([executable.lastPathComponent] + arguments).joined(separator: " ")
        try waitForExit(process, seconds: seconds, command: command, output: stdout.text + stderr.text)
        stdout.waitForEOF(seconds: 5)
        stderr.waitForEOF(seconds: 5)
        return (process.terminationStatus, stdout.text, stderr.text)
    }
}
